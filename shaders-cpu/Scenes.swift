import Raster
/// Test scenes as pure per-frame CPU programs. (Filled in by the rasterizer issue.)
public enum ScenesPlaceholder {}
