import DRM
print("cadence: XRGB8888 = \(String(DRMFourCC.xrgb8888, radix: 16))")
