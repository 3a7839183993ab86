import DRM
import KMSDisplay
import FuzzSupport

/// `--mode WxH[@HZ]`: parse, print, and resolve against a connector's modes (listed, scaled
/// or CVT), as `measure`/`run` do. A parsed request must stay inside the documented ranges.
let modes: [ModeInfo] = [
    ModeInfo(clock: 65000, hdisplay: 1024, hsyncStart: 1048, hsyncEnd: 1184, htotal: 1344,
             vdisplay: 768, vsyncStart: 771, vsyncEnd: 777, vtotal: 806, type: [.preferred, .driver]),
    ModeInfo(clock: 148500, hdisplay: 1920, hsyncStart: 2008, hsyncEnd: 2052, htotal: 2200,
             vdisplay: 1080, vsyncStart: 1084, vsyncEnd: 1089, vtotal: 1125),
    ModeInfo(clock: 74250, hdisplay: 1920, hsyncStart: 2448, hsyncEnd: 2492, htotal: 2640,
             vdisplay: 1080, vsyncStart: 1084, vsyncEnd: 1094, vtotal: 1125, flags: [.interlace]),
    ModeInfo(clock: 25175, hdisplay: 640, hsyncStart: 656, hsyncEnd: 752, htotal: 800,
             vdisplay: 480, vsyncStart: 490, vsyncEnd: 492, vtotal: 525),
]

runFuzzer { data, size in
    guard let request = ModeRequest(parsing: fuzzText(data, size)) else { return 0 }
    precondition((1...65535).contains(request.width) && (1...65535).contains(request.height))
    precondition(request.hz.map { $0.isFinite && $0 >= 1 && $0 <= 1000 } ?? true)
    _ = request.description
    if let m = request.resolve(in: modes)?.mode {
        _ = m.description
        precondition(m.refreshHz.isFinite && m.refreshHz >= 0)
    }
    return 0
}
