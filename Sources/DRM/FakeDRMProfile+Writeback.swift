/// Reading a profile's writeback connectors.
extension FakeDRMProfile {
    /// A drm_info writeback connector (type 18): its id, type id, encoders and the formats of its
    /// `WRITEBACK_PIXEL_FORMATS` data.
    static func writeback(_ c: [String: JSON], id: UInt32, index: Int) -> FakeWritebackConnector {
        let data = c["properties"]?.object?["WRITEBACK_PIXEL_FORMATS"]?.object?["data"]?.array ?? []
        return FakeWritebackConnector(
            id: ConnectorID(id), typeID: uint32(c["type_id"]) ?? UInt32(index + 1),
            encoders: (c["encoders"]?.array ?? []).compactMap(uint32).map(EncoderID.init),
            formats: data.compactMap(uint32).map(PixelFormat.init(rawValue:)))
    }

    /// The writeback connectors with `cadence.writebackFormats` (fourcc strings) applied to each;
    /// a connector without formats is dropped (an empty list: the driver has none).
    static func writeback(
        _ list: [FakeWritebackConnector], formats: JSON?, node: String
    ) throws -> [FakeWritebackConnector] {
        var list = list
        if let formats {
            guard let items = formats.array?.map(\.string), items.allSatisfy({ $0?.utf8.count == 4 }) else {
                throw FakeDRMProfileError(
                    "\(node): cadence.writebackFormats must be an array of fourcc strings (\"XR24\")")
            }
            let fourccs = items.compactMap { $0 }.map { PixelFormat(rawValue: PixelFormat.fourcc($0)) }
            for i in list.indices { list[i].formats = fourccs }
        }
        return list.filter { !$0.formats.isEmpty }
    }
}
