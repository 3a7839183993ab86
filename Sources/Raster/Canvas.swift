/// The CPU rasterizer. (Filled in by the rasterizer issue.)
public enum RasterPlaceholder {}
