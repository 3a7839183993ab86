import Raster

/// The frame identity drawn into every frame while scanout is verified: a one-row barcode in the
/// top-left corner carrying the frame index and a check value, so that consecutive frames always
/// differ (a CRC of the scanout changes at every new frame) and a captured frame can be decoded.
///
/// Layout, in square cells of ``cellSize(width:height:)`` pixels: a grey border one cell wide
/// around a row of 44 cells at (1, 1) cells from the corner: a start marker (white, black), the
/// 32 bits of the frame index (its low 32 bits, most significant first), the 8 bits of
/// ``check(_:)``, an end marker (black, white). White (0xFFFFFF) is 1, black (0x000000) is 0;
/// the strip covers 46 × 3 cells. A canvas narrower than 46 pixels gets no identity.
public enum FrameIdentity {
    /// Cells in the row: markers, 32 index bits, 8 check bits.
    public static let cells = 44
    static let border = Color(rgb: 0x808080)

    /// The cell size for a canvas: 1/192 of its shorter side, at least 2 pixels, shrunk so
    /// that the strip fits the width (1 pixel at least); 0 when it cannot fit.
    public static func cellSize(width: Int, height: Int) -> Int {
        var c = max(2, min(width, height) / 192)
        while c > 0 && (c * (cells + 2) > width || c * 3 > height) { c -= 1 }
        return c
    }

    /// CRC-8 (polynomial 0x07, initial 0) of the index's 4 bytes, most significant first.
    public static func check(_ index: UInt32) -> UInt8 {
        crc8([24, 16, 8, 0].map { UInt8(truncatingIfNeeded: index >> UInt32($0)) })
    }

    /// CRC-8/SMBUS (polynomial 0x07, initial 0, no reflection, no final XOR).
    static func crc8(_ bytes: [UInt8]) -> UInt8 {
        var crc: UInt8 = 0
        for byte in bytes {
            crc ^= byte
            for _ in 0..<8 { crc = crc & 0x80 != 0 ? (crc << 1) ^ 0x07 : crc << 1 }
        }
        return crc
    }

    /// The 44 cell values for `index`.
    public static func bits(_ index: UInt32) -> [Bool] {
        var b: [Bool] = [true, false]
        for i in (0..<32).reversed() { b.append((index >> UInt32(i)) & 1 == 1) }
        let c = check(index)
        for i in (0..<8).reversed() { b.append((c >> UInt8(i)) & 1 == 1) }
        b += [false, true]
        return b
    }

    /// Draws the identity of frame `index` over `canvas` (inside its clip, so banded rendering
    /// draws the same pixels).
    public static func draw(_ index: Int, into canvas: Canvas) {
        let c = cellSize(width: canvas.width, height: canvas.height)
        guard c > 0 else { return }
        canvas.fillRect(x: 0, y: 0, width: c * (cells + 2), height: c * 3, border)
        for (k, on) in bits(UInt32(truncatingIfNeeded: index)).enumerated() {
            canvas.fillRect(x: c * (k + 1), y: c, width: c, height: c, on ? .white : .black)
        }
    }

    /// Draws the identity of frame `index` over the XRGB8888 pixels at `base` (`stride` bytes per row).
    public static func draw(_ index: Int, base: UnsafeMutableRawPointer, width: Int, height: Int, stride: Int) {
        draw(index, into: Canvas(base: base, width: width, height: height, stride: stride))
    }

    /// Reads the identity from XRGB8888 pixels at `base` (`stride` bytes per row): the frame
    /// index (low 32 bits), or nil when the markers or the check value do not match.
    public static func decode(base: UnsafeRawPointer, width: Int, height: Int, stride: Int) -> UInt32? {
        let c = cellSize(width: width, height: height)
        guard c > 0 else { return nil }
        var b: [Bool] = []
        b.reserveCapacity(cells)
        for k in 0..<cells {
            let x = c * (k + 1) + c / 2, y = c + c / 2
            let px = base.load(fromByteOffset: y * stride + x * 4, as: UInt32.self)
            let sum = (px >> 16 & 0xff) + (px >> 8 & 0xff) + (px & 0xff)
            b.append(sum > 384)
        }
        guard b[0], !b[1], !b[cells - 2], b[cells - 1] else { return nil }
        var index: UInt32 = 0
        for i in 0..<32 { index = index << 1 | (b[2 + i] ? 1 : 0) }
        var check: UInt8 = 0
        for i in 0..<8 { check = check << 1 | (b[34 + i] ? 1 : 0) }
        return check == Self.check(index) ? index : nil
    }
}
