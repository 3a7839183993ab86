import CDRM
import CCadenceShim

/// The Swift DRM/KMS layer. (Filled in by the foundation issue.)
public enum DRMFourCC {
    public static var xrgb8888: UInt32 { cadence_fourcc_xrgb8888() }
}
