#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Anti-aliased shapes: circles (exact distance coverage per edge pixel, solid spans
/// inside) and polygons/lines (exact signed-area coverage per cell, accumulated per row).
/// Both work row by row, so a row's pixels depend only on the shape and the row: banded
/// rendering matches single-threaded rendering bit for bit.

/// Coordinates beyond this magnitude are treated as invalid and the shape is skipped.
@usableFromInline let maxCoordinate: Double = 1e7

extension Canvas {
    /// Fills an anti-aliased disc. A pixel's coverage is `clamp(r + ½ − d, 0, 1)` where `d`
    /// is the distance from the pixel centre to `center`: exact for the edge's local
    /// slope within a pixel and never more than ½ pixel from the analytic area.
    public func fillCircle(center: Point, radius r: Double, _ color: Color) {
        let cx = center.x, cy = center.y
        guard r > 0, r < maxCoordinate, abs(cx) < maxCoordinate, abs(cy) < maxCoordinate, color.alpha > 0 else { return }
        let c = clip
        let ro = r + 0.5
        let y0 = max(c.minY, Int((cy - ro).rounded(.down)))
        let y1 = min(c.maxY, Int((cy + ro).rounded(.up)))
        if y0 >= y1 || cx + ro < Double(c.minX) || cx - ro > Double(c.maxX) { return }
        let pixel = color.opaquePixel
        let alpha = color.alpha
        let ca = Double(alpha)
        let full = ConstantBlend(pixel: pixel, alpha: alpha)
        let ri = r - 0.5
        let ro2 = ro * ro
        let ri2 = ri > 0 ? ri * ri : -1
        var y = y0
        while y < y1 {
            let dy = Double(y) + 0.5 - cy
            let dy2 = dy * dy
            let o2 = ro2 - dy2
            if o2 > 0 {
                let ox = o2.squareRoot()
                let xa = max(c.minX, Int((cx - ox - 0.5).rounded(.up)))
                let xb = min(c.maxX - 1, Int((cx + ox - 0.5).rounded(.down)))
                if xa <= xb {
                    var ia = xb + 1, ib = xb
                    let i2 = ri2 - dy2
                    if i2 >= 0 {
                        let ix = i2.squareRoot()
                        ia = max(xa, Int((cx - ix - 0.5).rounded(.up)))
                        ib = min(xb, Int((cx + ix - 0.5).rounded(.down)))
                        if ia > ib { ia = xb + 1; ib = xb }
                    }
                    let p = row(y)
                    var x = xa
                    while x < ia {
                        Canvas.circleEdge(p, x, cx, dy2, ro, ca, pixel)
                        x &+= 1
                    }
                    if ia <= ib {
                        if alpha == 255 { spanFill(p + ia, ib - ia + 1, pixel) } else { spanBlend(p + ia, ib - ia + 1, full) }
                    }
                    x = max(ib + 1, ia)
                    while x <= xb {
                        Canvas.circleEdge(p, x, cx, dy2, ro, ca, pixel)
                        x &+= 1
                    }
                }
            }
            y &+= 1
        }
    }

    @inline(__always)
    static func circleEdge(_ p: UnsafeMutablePointer<UInt32>, _ x: Int, _ cx: Double, _ dy2: Double, _ ro: Double, _ ca: Double, _ pixel: UInt32) {
        let dx = Double(x) + 0.5 - cx
        var cov = ro - (dx * dx + dy2).squareRoot()
        if cov <= 0 { return }
        if cov > 1 { cov = 1 }
        let a = UInt32(cov * ca + 0.5)
        if a == 0 { return }
        p[x] = a >= 255 ? pixel : blendPixel(p[x], pixel, a)
    }

    /// Fills a polygon (closed automatically) with anti-aliased edges: each pixel's coverage
    /// is the exact area of the pixel inside the polygon, accumulated from signed edge areas
    /// (non-zero winding, coverage clamped to 1).
    public func fillPolygon(_ points: [Point], _ color: Color) {
        points.withUnsafeBufferPointer { fillPolygon($0, color) }
    }

    /// Fills a polygon given as a buffer of points; see ``fillPolygon(_:_:)-([Point],_)``.
    public func fillPolygon(_ points: UnsafeBufferPointer<Point>, _ color: Color) {
        let n = points.count
        guard n >= 3, color.alpha > 0 else { return }
        var minX = Double.infinity, maxX = -Double.infinity, minY = Double.infinity, maxY = -Double.infinity
        for p in points {
            guard abs(p.x) < maxCoordinate, abs(p.y) < maxCoordinate else { return }
            minX = min(minX, p.x); maxX = max(maxX, p.x)
            minY = min(minY, p.y); maxY = max(maxY, p.y)
        }
        let c = clip
        let y0 = max(c.minY, Int(minY.rounded(.down)))
        let y1 = min(c.maxY, Int(maxY.rounded(.up)))
        let ox = max(c.minX, Int(minX.rounded(.down)))
        let bx1 = min(c.maxX, Int(maxX.rounded(.up)) + 1)
        if y0 >= y1 || ox >= bx1 { return }
        let w = bx1 - ox
        withUnsafeTemporaryAllocation(of: PolygonEdge.self, capacity: n) { edgesBuf in
            var count = 0
            for i in 0..<n {
                let a = points[i], b = points[i == n - 1 ? 0 : i + 1]
                if a.y == b.y { continue }
                let e = a.y < b.y
                    ? PolygonEdge(x0: a.x, y0: a.y, y1: b.y, dxdy: (b.x - a.x) / (b.y - a.y), dir: 1)
                    : PolygonEdge(x0: b.x, y0: b.y, y1: a.y, dxdy: (a.x - b.x) / (a.y - b.y), dir: -1)
                (edgesBuf.baseAddress! + count).initialize(to: e)
                count += 1
            }
            if count == 0 { return }
            // One allocation: the accumulator (w + 1 doubles), then w coverage bytes.
            withUnsafeTemporaryAllocation(of: Double.self, capacity: w + 1 + (w + 7) / 8) { accBuf in
                let acc = accBuf.baseAddress!
                acc.initialize(repeating: 0, count: w + 1)
                let mask = UnsafeMutableRawPointer(acc + (w + 1)).bindMemory(to: UInt8.self, capacity: w)
                var cells = CoverageRow(acc: acc, mask: mask, origin: ox, width: w)
                let edges = UnsafeBufferPointer(start: edgesBuf.baseAddress!, count: count)
                for y in y0..<y1 {
                    let top = Double(y), bottom = top + 1
                    cells.kmin = Int.max
                    cells.kmax = -1
                    for e in edges {
                        if e.y1 <= top || e.y0 >= bottom { continue }
                        let ya = max(e.y0, top), yb = min(e.y1, bottom)
                        let xa = e.x0 + (ya - e.y0) * e.dxdy
                        let xb = e.x0 + (yb - e.y0) * e.dxdy
                        cells.addSegment(xa, xb, (yb - ya) * e.dir)
                    }
                    if cells.kmax >= 0 {
                        cells.paintRow(row(y), end: bx1, color)
                    }
                }
            }
        }
    }

    /// Strokes the segment from `a` to `b` with an anti-aliased line `width` pixels wide
    /// (butt caps).
    public func strokeLine(from a: Point, to b: Point, width: Double, _ color: Color) {
        let dx = b.x - a.x, dy = b.y - a.y
        let len = (dx * dx + dy * dy).squareRoot()
        guard len > 0, width > 0 else { return }
        let s = width * 0.5 / len
        let nx = -dy * s, ny = dx * s
        let quad = [Point(a.x + nx, a.y + ny), Point(b.x + nx, b.y + ny), Point(b.x - nx, b.y - ny), Point(a.x - nx, a.y - ny)]
        fillPolygon(quad, color)
    }

    /// Fills an anti-aliased ellipse (as a polygon of enough segments that the flattening
    /// error stays under 1/8 pixel).
    public func fillEllipse(center: Point, radiusX rx: Double, radiusY ry: Double, _ color: Color) {
        guard rx > 0, ry > 0 else { return }
        let r = max(rx, ry)
        let segments = min(256, max(12, Int((Double.pi / acos(max(0, 1 - 0.125 / r))).rounded(.up))))
        var pts = [Point]()
        pts.reserveCapacity(segments)
        for i in 0..<segments {
            let t = Double(i) * 2 * Double.pi / Double(segments)
            pts.append(Point(center.x + rx * cos(t), center.y + ry * sin(t)))
        }
        fillPolygon(pts, color)
    }
}

/// One non-horizontal polygon edge, oriented downwards (`y0 < y1`), with its winding sign.
@usableFromInline
struct PolygonEdge {
    var x0: Double
    var y0: Double
    var y1: Double
    var dxdy: Double
    var dir: Double
}

/// The signed-area accumulator for one row: `acc[k]` is the change in coverage between
/// pixel `origin + k − 1` and `origin + k`. Cells left of `origin` fold into `acc[0]`
/// (they shift every visible pixel alike); cells right of the row end are dropped.
struct CoverageRow {
    let acc: UnsafeMutablePointer<Double>
    /// Per-pixel alpha of the row being painted (index k as `acc`).
    let mask: UnsafeMutablePointer<UInt8>
    let origin: Int
    let width: Int
    var kmin = Int.max
    var kmax = -1

    init(acc: UnsafeMutablePointer<Double>, mask: UnsafeMutablePointer<UInt8>, origin: Int, width: Int) {
        self.acc = acc
        self.mask = mask
        self.origin = origin
        self.width = width
    }

    @inline(__always)
    mutating func add(_ cell: Int, _ v: Double) {
        var k = cell - origin
        if k < 0 { k = 0 }
        if k > width { return }
        acc[k] += v
        if k < kmin { kmin = k }
        if k > kmax { kmax = k }
    }

    /// Adds a segment that lies within one row, from x `xa` (at its top) to `xb` (at its
    /// bottom), covering `d` of the row's height (negative for upward edges).
    mutating func addSegment(_ xa: Double, _ xb: Double, _ d: Double) {
        let x0 = min(xa, xb), x1 = max(xa, xb)
        let x0f = x0.rounded(.down)
        let i0 = Int(x0f)
        let x1c = x1.rounded(.up)
        let i1 = Int(x1c)
        if i1 <= i0 + 1 {
            // Within one cell: the cell gets the area right of the segment's mid x.
            let xm = 0.5 * (xa + xb) - x0f
            add(i0, d * (1 - xm))
            add(i0 + 1, d * xm)
            return
        }
        let s = 1 / (x1 - x0)
        let f0 = x0 - x0f
        let a0 = 0.5 * s * (1 - f0) * (1 - f0)
        let f1 = x1 - x1c + 1
        let am = 0.5 * s * f1 * f1
        add(i0, d * a0)
        if i1 == i0 + 2 {
            add(i0 + 1, d * (1 - a0 - am))
        } else {
            let a1 = s * (1.5 - f0)
            add(i0 + 1, d * (a1 - a0))
            // Whole cells in the middle each add d·s; fold those left of origin at once.
            var i = i0 + 2
            let end = i1 - 1
            if i < origin {
                let left = min(end, origin) - i
                if left > 0 { add(origin - 1, Double(left) * d * s) }
                i = max(i, origin)
            }
            let stop = min(end, origin + width + 1)
            let ds = d * s
            while i < stop {
                add(i, ds)
                i += 1
            }
            let a2 = a1 + Double(i1 - i0 - 3) * s
            add(i1 - 1, d * (1 - a2 - am))
        }
        add(i1, d * am)
    }

    /// Turns the accumulated row into pixels from `origin + kmin` up to `end` and clears the
    /// accumulator for the next row. Each pixel gets ``blendPixel(_:_:_:)`` at its coverage
    /// alpha: runs of one alpha at least ``CoverageRow/longRun`` pixels long as one fill or
    /// constant blend, the pixels between them through the coverage-blend kernel.
    mutating func paintRow(_ row: UnsafeMutablePointer<UInt32>, end: Int, _ color: Color) {
        let pixel = color.opaquePixel
        let ca = Double(color.alpha)
        let p = row + origin
        var sum = 0.0
        var segStart = kmin  // first pixel not painted yet
        var runStart = kmin
        var runA: UInt32 = 0
        var k = kmin
        let last = min(kmax, width - 1)
        while k <= last {
            sum += acc[k]
            acc[k] = 0
            var cov = abs(sum)
            if cov > 1 { cov = 1 }
            let a = UInt32(cov * ca + 0.5)
            mask[k] = UInt8(truncatingIfNeeded: a)
            if a != runA {
                if k - runStart >= Self.longRun {
                    blendMaskKernel(p + segStart, mask + segStart, runStart - segStart, pixel)
                    spanPaint(p + runStart, k - runStart, pixel, runA)
                    segStart = k
                }
                runStart = k
                runA = a
            }
            k += 1
        }
        if kmax >= width { acc[width] = 0 }
        // The last run continues at the same alpha up to `end`.
        blendMaskKernel(p + segStart, mask + segStart, runStart - segStart, pixel)
        spanPaint(p + runStart, end - origin - runStart, pixel, runA)
    }

    /// Runs of one alpha at least this long are painted as a span, not pixel by pixel.
    static var longRun: Int { 16 }
}
