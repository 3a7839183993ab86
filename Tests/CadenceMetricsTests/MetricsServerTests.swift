import CadenceCore
import Foundation
import Testing
@testable import CadenceMetrics

#if canImport(Glibc)
import Glibc
#endif

/// One HTTP/1.1 request over a plain socket (AF_INET or AF_INET6): the status line, the
/// headers and the body the server sent before closing (Connection: close).
func httpRequest(_ method: String, _ path: String, host: String = "127.0.0.1", port: Int) throws -> (status: String, headers: String, body: String) {
    var hints = addrinfo()
    hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
    var res: UnsafeMutablePointer<addrinfo>?
    guard getaddrinfo(host, String(port), &hints, &res) == 0, let ai = res else { throw MetricsError("getaddrinfo \(host)") }
    defer { freeaddrinfo(res) }
    let s = socket(ai.pointee.ai_family, Int32(SOCK_STREAM.rawValue), 0)
    guard s >= 0 else { throw MetricsError("socket") }
    defer { close(s) }
    var tv = timeval(tv_sec: 10, tv_usec: 0)
    setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, socklen_t(MemoryLayout<timeval>.size))
    guard connect(s, ai.pointee.ai_addr, ai.pointee.ai_addrlen) == 0 else { throw MetricsError("connect: \(errno)") }
    let req = Array("\(method) \(path) HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".utf8)
    _ = req.withUnsafeBytes { send(s, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }
    var out: [UInt8] = []
    var buf = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = buf.withUnsafeMutableBytes { recv(s, $0.baseAddress!, $0.count, 0) }
        if n <= 0 { break }
        out += buf[0..<n]
    }
    let text = String(decoding: out, as: UTF8.self)
    let status = text.components(separatedBy: "\r\n")[0]
    guard let split = text.range(of: "\r\n\r\n") else { return (status, text, "") }
    return (status, String(text[..<split.lowerBound]), String(text[split.upperBound...]))
}

@Suite struct MetricsServerTests {
    #if MetricsHTTP
    @Test func servesMetricsAndNothingElse() throws {
        let server = try MetricsServer(address: "127.0.0.1", port: 0) { Array("cadence_x 1\n".utf8) }
        defer { server.stop() }
        #expect(server.port > 0)
        let get = try httpRequest("GET", "/metrics", port: server.port)
        #expect(get.status == "HTTP/1.1 200 OK")
        #expect(get.body == "cadence_x 1\n")
        #expect(get.headers.lowercased().contains("content-type: text/plain; version=0.0.4"))
        let query = try httpRequest("GET", "/metrics?name=x", port: server.port)
        #expect(query.status == "HTTP/1.1 200 OK" && query.body == "cadence_x 1\n")
        let head = try httpRequest("HEAD", "/metrics", port: server.port)
        #expect(head.status == "HTTP/1.1 200 OK")
        #expect(head.body.isEmpty)
        #expect(head.headers.lowercased().contains("content-length: 12"))
        #expect(try httpRequest("GET", "/", port: server.port).status == "HTTP/1.1 404 Not Found")
        #expect(try httpRequest("GET", "/metricsx", port: server.port).status == "HTTP/1.1 404 Not Found")
        #expect(try httpRequest("POST", "/metrics", port: server.port).status == "HTTP/1.1 405 Method Not Allowed")
    }

    @Test func servesIPv6Loopback() throws {
        let server = try MetricsServer(address: "::1", port: 0) { Array("v6 1\n".utf8) }
        defer { server.stop() }
        let get = try httpRequest("GET", "/metrics", host: "::1", port: server.port)
        #expect(get.status == "HTTP/1.1 200 OK" && get.body == "v6 1\n")
        // Bound to ::1 only: not reachable on 127.0.0.1.
        #expect(throws: MetricsError.self) { try httpRequest("GET", "/metrics", port: server.port) }
    }

    @Test func aPortInUseIsOneLine() throws {
        let first = try MetricsServer(address: "127.0.0.1", port: 0) { [] }
        defer { first.stop() }
        let error = #expect(throws: MetricsError.self) { try MetricsServer(address: "127.0.0.1", port: first.port) { [] } }
        #expect(error?.description == "cannot serve metrics on 127.0.0.1:\(first.port): address already in use")
        let firstV6 = try MetricsServer(address: "::1", port: 0) { [] }
        defer { firstV6.stop() }
        let v6 = #expect(throws: MetricsError.self) { try MetricsServer(address: "::1", port: firstV6.port) { [] } }
        #expect(v6?.description == "cannot serve metrics on [::1]:\(firstV6.port): address already in use")
    }

    @Test func notAnAddressIsOneLine() throws {
        let error = #expect(throws: MetricsError.self) { try MetricsServer(address: "not an address", port: 0) { [] } }
        #expect(error?.description.hasPrefix("cannot serve metrics on not an address:0: ") == true)
        #expect(error?.description.contains("\n") == false)
    }

    @Test func stopClosesTheSocket() throws {
        let server = try MetricsServer(address: "127.0.0.1", port: 0) { [] }
        let port = server.port
        server.stop()
        #expect(throws: MetricsError.self) { try httpRequest("GET", "/metrics", port: port) }
        // The port is free again.
        let again = try MetricsServer(address: "127.0.0.1", port: port) { [] }
        again.stop()
    }
    #else
    @Test func withoutTheTraitThereIsNoServer() {
        #expect(!MetricsServer.isAvailable)
        let error = #expect(throws: MetricsError.self) { try MetricsServer(address: "127.0.0.1", port: 0) { [] } }
        #expect(error == .httpUnavailable)
        #expect(error?.description == "this build has no HTTP server: built without the MetricsHTTP trait; use --metrics-textfile")
    }
    #endif
}
