import DRM

/// One CRTC per connector for several outputs of one device, chosen from the encoders'
/// possible CRTCs so that no two connectors share one.
///
/// The CRTC already driving a connector is kept when it can be; otherwise the choice is a
/// bipartite matching (augmenting paths), so a connector that can use only one CRTC gets it even
/// when another connector, listed first, could have taken it.
public enum CRTCAssignment {
    /// The CRTC for each of `connectors`, in order. Throws ``OutputSelectionError`` with one
    /// line when no conflict-free assignment exists (e.g. two connectors whose encoders can
    /// only use the same CRTC).
    public static func assign(_ connectors: [Connector], on dev: DRMDevice) throws -> [CRTCID] {
        let res: CardResources
        do { res = try dev.resources() } catch let e as DRMError { throw OutputSelection.failure(e, path: dev.path) }
        var possible: [[Int]] = []
        var current: [Int?] = []
        for c in connectors {
            var mask: UInt32 = 0
            for e in c.encoders { if let enc = try? dev.encoder(e) { mask |= enc.possibleCRTCs } }
            var now: Int?
            if !c.encoderID.isNone, let enc = try? dev.encoder(c.encoderID), !enc.crtcID.isNone {
                now = res.crtcs.firstIndex(of: enc.crtcID)
            }
            let list = res.crtcs.indices.filter { mask & (1 << UInt32($0)) != 0 }
            guard !list.isEmpty else { throw OutputSelectionError("\(dev.path): no CRTC can drive \(c.name)") }
            // The CRTC in use first, then the others in index order.
            possible.append(now.map { n in list.contains(n) ? [n] + list.filter { $0 != n } : list } ?? list)
            current.append(now)
        }
        guard let match = matching(possible) else {
            let names = connectors.map(\.name).joined(separator: ", ")
            throw OutputSelectionError("\(dev.path): \(names) cannot all be driven at once: their encoders offer fewer CRTCs than connectors (\(describe(connectors, possible, res.crtcs)))")
        }
        return match.map { res.crtcs[$0] }
    }

    /// A CRTC index per row of `possible` (each row in order of preference), no index twice;
    /// nil when there is none (Kuhn's augmenting paths).
    public static func matching(_ possible: [[Int]]) -> [Int]? {
        var owner: [Int: Int] = [:]
        func place(_ row: Int, _ seen: inout Set<Int>) -> Bool {
            for c in possible[row] where !seen.contains(c) {
                seen.insert(c)
                if let other = owner[c] {
                    if place(other, &seen) { owner[c] = row; return true }
                } else {
                    owner[c] = row
                    return true
                }
            }
            return false
        }
        for row in possible.indices {
            var seen = Set<Int>()
            if !place(row, &seen) { return nil }
        }
        var result = [Int](repeating: -1, count: possible.count)
        for (c, row) in owner { result[row] = c }
        return result
    }

    private static func describe(_ connectors: [Connector], _ possible: [[Int]], _ crtcs: [CRTCID]) -> String {
        zip(connectors, possible).map { c, p in "\(c.name): \(p.map { "\(crtcs[$0])" }.joined(separator: " or "))" }.joined(separator: "; ")
    }
}
