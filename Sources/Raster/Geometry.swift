/// Geometry value types shared by the rasterizer.

/// An integer pixel rectangle, half-open: it contains x in `minX..<maxX`, y in `minY..<maxY`.
public struct IntRect: Equatable, Hashable, Sendable, CustomStringConvertible {
    public var minX: Int
    public var minY: Int
    public var maxX: Int
    public var maxY: Int

    /// A rectangle from its corner and size (a negative size gives an empty rectangle).
    @inlinable
    public init(x: Int, y: Int, width: Int, height: Int) {
        minX = x
        minY = y
        maxX = x &+ max(width, 0)
        maxY = y &+ max(height, 0)
    }

    /// A rectangle from its bounds (half-open).
    @inlinable
    public init(minX: Int, minY: Int, maxX: Int, maxY: Int) {
        self.minX = minX
        self.minY = minY
        self.maxX = maxX
        self.maxY = maxY
    }

    @inlinable public var width: Int { max(maxX &- minX, 0) }
    @inlinable public var height: Int { max(maxY &- minY, 0) }
    /// True when the rectangle contains no pixel.
    @inlinable public var isEmpty: Bool { maxX <= minX || maxY <= minY }

    /// The pixels in both rectangles (possibly empty).
    @inlinable
    public func intersection(_ other: IntRect) -> IntRect {
        IntRect(
            minX: Swift.max(minX, other.minX), minY: Swift.max(minY, other.minY),
            maxX: Swift.min(maxX, other.maxX), maxY: Swift.min(maxY, other.maxY))
    }

    public var description: String { "(\(minX),\(minY) \(width)x\(height))" }
}

/// A point in pixel space. Pixel (x, y) covers the square [x, x+1) × [y, y+1), so its centre
/// is at (x + 0.5, y + 0.5).
public struct Point: Equatable, Hashable, Sendable {
    public var x: Double
    public var y: Double
    @inlinable
    public init(_ x: Double, _ y: Double) {
        self.x = x
        self.y = y
    }
}
