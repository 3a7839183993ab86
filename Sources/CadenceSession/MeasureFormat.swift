import Foundation

extension String {
    /// `value` with four decimals (`measure`'s numbers).
    init(measureFormat4 value: Double) {
        guard value.isFinite else {
            self = "\(value)"
            return
        }
        let scaled = (abs(value) * 10000).rounded()
        let whole = Int(scaled / 10000)
        var frac = String(Int(scaled - Double(whole) * 10000))
        while frac.count < 4 { frac = "0" + frac }
        self = (value < 0 ? "-" : "") + "\(whole).\(frac)"
    }
}
