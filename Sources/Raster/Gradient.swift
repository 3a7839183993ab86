/// Linear and radial gradients: a 256-entry colour table indexed by a fixed-point position
/// that advances by a constant integer step per pixel (no per-pixel division).

/// A colour ramp, sampled into 256 entries (pad extend: positions outside 0...1 clamp).
public struct Gradient: Sendable {
    /// One colour stop at `offset` in 0...1.
    public struct Stop: Sendable, Equatable {
        public var offset: Double
        public var color: Color
        public init(_ offset: Double, _ color: Color) {
            self.offset = offset
            self.color = color
        }
    }

    /// The 256 sampled colours, `0xAARRGGBB`.
    public let table: [UInt32]
    /// True when every stop is opaque (the fast copy path is used).
    public let isOpaque: Bool

    /// A ramp through `stops` (sorted by offset here; at least one stop).
    public init(stops: [Stop]) {
        let s = stops.sorted { $0.offset < $1.offset }
        precondition(!s.isEmpty, "a gradient needs at least one stop")
        var t = [UInt32](repeating: 0, count: 256)
        for i in 0..<256 {
            let pos = Double(i) / 255
            var j = 0
            while j < s.count - 1 && s[j + 1].offset < pos { j += 1 }
            let a = s[j], b = s[min(j + 1, s.count - 1)]
            var f = 0.0
            if pos <= a.offset || b.offset <= a.offset { f = pos <= a.offset ? 0 : 1 } else { f = min(1, (pos - a.offset) / (b.offset - a.offset)) }
            func mix(_ x: UInt32, _ y: UInt32) -> UInt32 {
                UInt32((Double(x) + (Double(y) - Double(x)) * f).rounded())
            }
            let ca = a.color.argb, cb = b.color.argb
            var v: UInt32 = 0
            for shift: UInt32 in [0, 8, 16, 24] {
                v |= mix((ca >> shift) & 0xFF, (cb >> shift) & 0xFF) << shift
            }
            t[i] = v
        }
        table = t
        isOpaque = s.allSatisfy { $0.color.alpha == 255 }
    }

    /// A two-stop ramp from `a` to `b`.
    public init(_ a: Color, _ b: Color) { self.init(stops: [Stop(0, a), Stop(1, b)]) }
}

extension Canvas {
    /// Fills `rect` with a linear gradient running from `p0` (position 0) to `p1` (position 1).
    ///
    /// Positions are 8.16 fixed point in 64-bit integers stepped by a constant per pixel.
    /// Each row's start is snapped to a whole number of steps (an error under one pixel
    /// along the ramp), so pixel x of row y sits at position `(k(y) + x) · step`: every row
    /// is a window of one strip of colours, computed once per call and copied row by row.
    /// Pixels depend only on (x, y), never on the clip, so bands match single-threaded output.
    public func fillLinearGradient(_ rect: IntRect, from p0: Point, to p1: Point, _ gradient: Gradient) {
        let r = rect.intersection(clip)
        if r.isEmpty { return }
        let dx = p1.x - p0.x, dy = p1.y - p0.y
        let len2 = dx * dx + dy * dy
        let opaque = gradient.isOpaque
        let alphaBits: UInt32 = opaque ? 0xFF00_0000 : 0
        gradient.table.withUnsafeBufferPointer { lutBuf in
            let lut = lutBuf.baseAddress!
            guard len2 > 1e-12 else {
                fill(r, Color(argb: lut[255]))
                return
            }
            let scale = 16_777_216.0 / len2  // 2^24: 256 entries × 2^16 fraction
            let step = Int64((dx * scale).rounded())
            @inline(__always) func base(_ y: Int) -> Int64 {
                Int64((((0.5 - p0.x) * dx + (Double(y) + 0.5 - p0.y) * dy) * scale).rounded())
            }
            @inline(__always) func color(_ u: Int64) -> UInt32 { lut[Int(min(max(u >> 16, 0), 255))] | alphaBits }
            @inline(__always) func put(_ p: UnsafeMutablePointer<UInt32>, _ c: UInt32) {
                if opaque { p.pointee = c } else {
                    let a = c >> 24
                    if a == 255 { p.pointee = c } else if a != 0 { p.pointee = blendPixel(p.pointee, c | 0xFF00_0000, a) }
                }
            }
            if step == 0 {
                // Vertical ramp: every row is one colour.
                for y in r.minY..<r.maxY {
                    let c = color(base(y))
                    if opaque { spanFill(row(y) + r.minX, r.width, c) } else { for x in r.minX..<r.maxX { put(row(y) + x, c) } }
                }
                return
            }
            let k0 = base(r.minY) / step, k1 = base(r.maxY - 1) / step
            let kmin = min(k0, k1), kmax = max(k0, k1)
            let j0 = kmin + Int64(r.minX)
            let length = Int(kmax - kmin) + r.width
            if length <= 1 << 16 {
                // The thread's scratch, not a temporary allocation: a strip of this size would
                // come from the heap, once per call.
                Scratch.with(bytes: length &* 4) { raw in
                    let s = raw.bindMemory(to: UInt32.self, capacity: length)
                    gradientSpanKernel(s, length, lut, j0 &* step, step, alphaBits)
                    // The strip stays in cache: one decision for the whole rect from the bytes written.
                    let copy = RowCopy(bytes: r.width &* 4, rows: r.height, from: .cacheResident)
                    for y in r.minY..<r.maxY {
                        let src = s + Int(base(y) / step + Int64(r.minX) - j0)
                        let dst = row(y) + r.minX
                        if opaque {
                            copy.copy(UnsafeMutableRawPointer(dst), dstStride: 0, UnsafeRawPointer(src), srcStride: 0,
                                      bytes: r.width &* 4, rows: 1)
                        } else {
                            for i in 0..<r.width { put(dst + i, src[i]) }
                        }
                    }
                }
                return
            }
            // Nearly vertical ramps over tall rects: colour per pixel along the same grid.
            for y in r.minY..<r.maxY {
                let p = row(y)
                var u = (base(y) / step &+ Int64(r.minX)) &* step
                if opaque {
                    gradientSpanKernel(p + r.minX, r.width, lut, u, step, alphaBits)
                    continue
                }
                for x in r.minX..<r.maxX {
                    put(p + x, color(u))
                    u &+= step
                }
            }
        }
    }

    /// Fills `rect` with a radial gradient: position 0 at `center`, 1 at distance `radius`.
    /// One square root per pixel, no division.
    public func fillRadialGradient(_ rect: IntRect, center: Point, radius: Double, _ gradient: Gradient) {
        let r = rect.intersection(clip)
        if r.isEmpty || !(radius > 0) { return }
        let k = 256.0 / radius
        let opaque = gradient.isOpaque
        gradient.table.withUnsafeBufferPointer { lutBuf in
            let lut = lutBuf.baseAddress!
            for y in r.minY..<r.maxY {
                let dy = (Double(y) + 0.5 - center.y) * k
                let dy2 = dy * dy
                var dx = (Double(r.minX) + 0.5 - center.x) * k
                let p = row(y)
                for x in r.minX..<r.maxX {
                    let t = (dx * dx + dy2).squareRoot()
                    let idx = t < 255 ? Int(t) : 255
                    let c = lut[idx]
                    if opaque {
                        p[x] = c | 0xFF00_0000
                    } else {
                        let a = c >> 24
                        if a == 255 { p[x] = c } else if a != 0 { p[x] = blendPixel(p[x], c | 0xFF00_0000, a) }
                    }
                    dx += k
                }
            }
        }
    }
}
