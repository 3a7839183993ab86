/// A 5×7 bitmap font written for Cadence (digits, capital letters, common punctuation),
/// drawn on a 6×8 cell. Lower-case letters draw as capitals; unknown characters as a box.
public enum BitmapFont {
    /// Width of one character cell at scale 1 (glyph 5 + 1 spacing).
    public static let cellWidth = 6
    /// Height of one character cell at scale 1 (glyph 7 + 1 spacing).
    public static let cellHeight = 8

    // Each glyph: 7 rows of 5 columns, '#' = ink.
    private static let source: [(Character, String)] = [
        (" ", "..... ..... ..... ..... ..... ..... ....."),
        ("0", ".###. #...# #..## #.#.# ##..# #...# .###."),
        ("1", "..#.. .##.. ..#.. ..#.. ..#.. ..#.. .###."),
        ("2", ".###. #...# ....# ...#. ..#.. .#... #####"),
        ("3", "##### ...#. ..#.. ...#. ....# #...# .###."),
        ("4", "...#. ..##. .#.#. #..#. ##### ...#. ...#."),
        ("5", "##### #.... ####. ....# ....# #...# .###."),
        ("6", "..##. .#... #.... ####. #...# #...# .###."),
        ("7", "##### ....# ...#. ..#.. .#... .#... .#..."),
        ("8", ".###. #...# #...# .###. #...# #...# .###."),
        ("9", ".###. #...# #...# .#### ....# ...#. .##.."),
        ("A", ".###. #...# #...# ##### #...# #...# #...#"),
        ("B", "####. #...# #...# ####. #...# #...# ####."),
        ("C", ".###. #...# #.... #.... #.... #...# .###."),
        ("D", "###.. #..#. #...# #...# #...# #..#. ###.."),
        ("E", "##### #.... #.... ####. #.... #.... #####"),
        ("F", "##### #.... #.... ####. #.... #.... #...."),
        ("G", ".###. #...# #.... #.### #...# #...# .####"),
        ("H", "#...# #...# #...# ##### #...# #...# #...#"),
        ("I", ".###. ..#.. ..#.. ..#.. ..#.. ..#.. .###."),
        ("J", "..### ...#. ...#. ...#. ...#. #..#. .##.."),
        ("K", "#...# #..#. #.#.. ##... #.#.. #..#. #...#"),
        ("L", "#.... #.... #.... #.... #.... #.... #####"),
        ("M", "#...# ##.## #.#.# #.#.# #...# #...# #...#"),
        ("N", "#...# #...# ##..# #.#.# #..## #...# #...#"),
        ("O", ".###. #...# #...# #...# #...# #...# .###."),
        ("P", "####. #...# #...# ####. #.... #.... #...."),
        ("Q", ".###. #...# #...# #...# #.#.# #..#. .##.#"),
        ("R", "####. #...# #...# ####. #.#.. #..#. #...#"),
        ("S", ".#### #.... #.... .###. ....# ....# ####."),
        ("T", "##### ..#.. ..#.. ..#.. ..#.. ..#.. ..#.."),
        ("U", "#...# #...# #...# #...# #...# #...# .###."),
        ("V", "#...# #...# #...# #...# #...# .#.#. ..#.."),
        ("W", "#...# #...# #...# #.#.# #.#.# #.#.# .#.#."),
        ("X", "#...# #...# .#.#. ..#.. .#.#. #...# #...#"),
        ("Y", "#...# #...# .#.#. ..#.. ..#.. ..#.. ..#.."),
        ("Z", "##### ....# ...#. ..#.. .#... #.... #####"),
        (".", "..... ..... ..... ..... ..... .##.. .##.."),
        (",", "..... ..... ..... ..... .##.. ..#.. .#..."),
        (":", "..... .##.. .##.. ..... .##.. .##.. ....."),
        (";", "..... .##.. .##.. ..... .##.. ..#.. .#..."),
        ("-", "..... ..... ..... ##### ..... ..... ....."),
        ("+", "..... ..#.. ..#.. ##### ..#.. ..#.. ....."),
        ("/", "..... ....# ...#. ..#.. .#... #.... ....."),
        ("%", "##... ##..# ...#. ..#.. .#... #..## ...##"),
        ("(", "...#. ..#.. .#... .#... .#... ..#.. ...#."),
        (")", ".#... ..#.. ...#. ...#. ...#. ..#.. .#..."),
        ("=", "..... ..... ##### ..... ##### ..... ....."),
        ("!", "..#.. ..#.. ..#.. ..#.. ..#.. ..... ..#.."),
        ("?", ".###. #...# ....# ...#. ..#.. ..... ..#.."),
        ("'", "..#.. ..#.. .#... ..... ..... ..... ....."),
        ("\"", ".#.#. .#.#. ..... ..... ..... ..... ....."),
        ("#", ".#.#. .#.#. ##### .#.#. ##### .#.#. .#.#."),
        ("*", "..... ..#.. #.#.# .###. #.#.# ..#.. ....."),
        ("<", "...#. ..#.. .#... #.... .#... ..#.. ...#."),
        (">", ".#... ..#.. ...#. ....# ...#. ..#.. .#..."),
        ("_", "..... ..... ..... ..... ..... ..... #####"),
        ("[", ".###. .#... .#... .#... .#... .#... .###."),
        ("]", ".###. ...#. ...#. ...#. ...#. ...#. .###."),
        ("|", "..#.. ..#.. ..#.. ..#.. ..#.. ..#.. ..#.."),
        ("\u{7F}", "##### #...# #...# #...# #...# #...# #####"),
    ]

    /// 128 glyphs × 7 rows; bit 4 of a row byte is the leftmost column.
    @usableFromInline static let rows: [UInt8] = {
        var t = [UInt8](repeating: 0, count: 128 * 7)
        for (ch, art) in source {
            let code = Int(ch.asciiValue!)
            let lines = art.split(separator: " ")
            precondition(lines.count == 7, "glyph \(ch) needs 7 rows")
            for (r, line) in lines.enumerated() {
                precondition(line.count == 5, "glyph \(ch) rows are 5 wide")
                var bits: UInt8 = 0
                for c in line.utf8 { bits = bits << 1 | (c == UInt8(ascii: "#") ? 1 : 0) }
                t[code * 7 + r] = bits
            }
        }
        // Lower case draws as upper case; other unknown codes draw as the box (0x7F).
        for code in 0..<128 where code != 32 && t[code * 7..<code * 7 + 7].allSatisfy({ $0 == 0 }) {
            let src = (code >= 97 && code <= 122) ? code - 32 : 0x7F
            for r in 0..<7 { t[code * 7 + r] = t[src * 7 + r] }
        }
        return t
    }()

    /// The glyph table index for a byte (non-ASCII bytes map to the box).
    @inlinable @inline(__always)
    static func glyph(_ byte: UInt8) -> Int { byte < 128 ? Int(byte) * 7 : 0x7F * 7 }

    /// The width in pixels of `text` drawn at `scale` (no trailing spacing column).
    public static func width(of text: String, scale: Int = 1) -> Int {
        let n = text.utf8.count
        return n == 0 ? 0 : (n * cellWidth - 1) * scale
    }
}

extension Canvas {
    /// Draws `text` with its top-left at (`x`, `y`), each font pixel a `scale`×`scale`
    /// square (blended by the colour's alpha). Returns the x just past the text.
    /// Bytes outside ASCII draw as a box; no allocation.
    @discardableResult
    public func drawText(_ text: String, x: Int, y: Int, scale: Int = 1, _ color: Color) -> Int {
        var text = text
        return text.withUTF8 { drawText(bytes: $0, x: x, y: y, scale: scale, color) }
    }

    /// Draws ASCII `bytes`; see ``drawText(_:x:y:scale:_:)-(String,_,_,_,_)``.
    @discardableResult
    public func drawText(bytes: UnsafeBufferPointer<UInt8>, x: Int, y: Int, scale: Int = 1, _ color: Color) -> Int {
        let s = max(scale, 1)
        let advance = BitmapFont.cellWidth * s
        let c = clip
        if y >= c.maxY || y + 7 * s <= c.minY || color.alpha == 0 { return x + advance * bytes.count }
        BitmapFont.rows.withUnsafeBufferPointer { table in
            var gx = x
            for b in bytes {
                if gx >= c.maxX { break }
                if gx + 5 * s > c.minX {
                    let g = BitmapFont.glyph(b)
                    for r in 0..<7 {
                        var bits = table[g + r]
                        var col = 0
                        while bits != 0 {
                            // Runs of ink in this row: one rectangle each.
                            while bits & 0x10 == 0 { bits <<= 1; col += 1 }
                            var run = 0
                            while bits & 0x10 != 0 { bits = (bits << 1) & 0x1F; run += 1 }
                            fill(IntRect(x: gx + col * s, y: y + r * s, width: run * s, height: s), color)
                            col += run
                        }
                    }
                }
                gx += advance
            }
        }
        return x + advance * bytes.count
    }
}
