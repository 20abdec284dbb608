// Engine-level addresses, bad input and flood behaviour, over real loopback sockets.
import Foundation
@testable import OSCControl
import Testing

@Suite struct OSCServiceBasicsTests {
    @Test func pingEchoesItsArguments() throws {
        let f = try OSCFixture()
        let pong = f.client.request("/ping", [.int32(7), .string("x")], reply: "/pong")
        #expect(pong?.arguments == [.int32(7), .string("x")])
    }

    @Test func versionReportsProgramAndAPI() throws {
        let f = try OSCFixture()
        let reply = f.client.request("/version", reply: "/version.reply")
        #expect(reply?.arguments == [.string("soundstage"), .int32(0), .int32(1), .int32(0), .string("1.0")])
    }

    @Test func statusWithoutHostIsOffline() throws {
        let f = try OSCFixture()
        let reply = try #require(f.client.request("/status", reply: "/status.reply"))
        #expect(reply.typeTags == "siifiissis")
        #expect(reply.arguments[0] == .string("offline"))
        #expect(reply.arguments[1] == .int32(48_000))
        #expect(reply.arguments[5] == .int32(2))  // main and output
    }

    @Test func statusReportsTheHost() throws {
        let f = try OSCFixture(host: MockHost())
        let reply = try #require(f.client.request("/status", reply: "/status.reply"))
        #expect(
            reply.arguments == [
                .string("running"), .int32(48_000), .int32(256), .float(1.5), .int32(3), .int32(2),
                .string("mock"), .string("soundstage"), .int32(0), .string("active")
            ])
    }

    @Test func quitAsksTheHost() throws {
        let host = MockHost()
        let f = try OSCFixture(host: host)
        #expect(f.client.command("/quit")?.address == "/done")
        for _ in 0..<100 where host.quitCount == 0 { Thread.sleep(forTimeInterval: 0.01) }
        #expect(host.quitCount == 1)
        let bare = try OSCFixture()
        #expect(bare.client.command("/quit")?.errorCode == OSCErrorCode.Layer.unsupported.rawValue)
    }

    @Test func unknownAddressesAndBadArgumentsAreErrors() throws {
        let f = try OSCFixture()
        #expect(f.client.command("/nonsense")?.errorCode == 60)
        #expect(f.client.command("/status", [.int32(1)])?.errorCode == 61)
        #expect(f.client.command("/node/new", [.int32(1)])?.errorCode == 61)
        #expect(f.client.command("/node/only-a-name")?.errorCode == 60)
    }

    @Test func malformedAndOversizedPacketsGetErrorsAndTheServerStillAnswers() throws {
        let f = try OSCFixture { $0.maxPacketSize = 1024 }
        f.client.sendRaw(Array("/a\0\0,q\0\0".utf8))
        f.client.sendRaw([])
        f.client.sendRaw([0xff, 0xfe, 0x00, 0x01])
        f.client.sendRaw(OSCPacket.message(OSCMessage("/ping", [.blob(Array(repeating: 7, count: 4000))])).encoded())
        f.client.receive(timeout: 1) { $0.errorCode == 63 }
        let errors = f.client.takeErrors()
        #expect(errors.filter { $0.errorCode == 62 }.count == 3)
        #expect(errors.filter { $0.errorCode == 63 }.count == 1)
        #expect(f.client.request("/ping", reply: "/pong") != nil)
        #expect(f.service.statistics.malformedPackets == 3)
        #expect(f.service.statistics.oversizedPackets == 1)
    }

    @Test func oddBytesInStringsAreHandled() throws {
        let f = try OSCFixture()
        var bytes = Array("/node/new\0\0\0,ss\0".utf8)
        bytes += [0x70, 0x6c, 0x61, 0x79, 0x65, 0x72, 0x00, 0x00]  // "player"
        bytes += [0xc3, 0x28, 0xff, 0x01, 0x00, 0x00, 0x00, 0x00]  // invalid UTF-8 and a control byte
        f.client.sendRaw(bytes)
        let reply = try #require(f.client.awaitOutcome("/node/new"))
        #expect(reply.errorCode == 12)
        #expect(f.client.request("/ping", reply: "/pong") != nil)
    }

    /// A node, recorder or buffer named like one of OSC's own methods would hide it (`/node/list`).
    @Test func namesOfOSCMethodsAreRefused() throws {
        let f = try OSCFixture()
        for name in ["list", "new", "free", "kinds", "load"] {
            #expect(f.client.command("/node/new", [.string("mixer"), .string(name)])?.errorCode == 12, "\(name)")
        }
        #expect(
            f.client.command("/recorder/new", [.string("list"), .string("main"), .string("t.wav")])?.errorCode == 12)
        #expect(f.client.request("/node/list", reply: "/reply") != nil)
    }

    @Test func errorFloodsAreRateLimited() throws {
        let f = try OSCFixture {
            $0.errorBurst = 5; $0.errorsPerSecond = 1
        }
        for _ in 0..<200 { f.client.send("/no/such/address") }
        f.client.receive(timeout: 1)
        let errors = f.client.takeErrors()
        #expect(errors.count >= 5 && errors.count <= 7)
        #expect(f.service.statistics.errorsSuppressed >= 190)
        #expect(f.client.request("/ping", reply: "/pong") != nil)
    }

    @Test func syncRepliesAfterEarlierCommandsTookEffect() throws {
        let f = try OSCFixture()
        let path = try f.writeWAV("tone.wav", channels: [Array(repeating: 0.25, count: 4800)])
        f.client.send("/buffer/load", [.string("tone"), .string(path)])
        f.client.send("/node/new", [.string("player"), .string("p")])
        f.client.send("/sync", [.int32(42)])
        f.client.receive(timeout: 5) { $0.address == "/synced" }
        #expect(f.client.take("/synced").first?.arguments == [.int32(42)])
        // The load finished before /synced.
        #expect(f.client.awaitOutcome("/buffer/load", timeout: 0.1)?.address == "/done")
    }

    @Test func syncWithoutRenderingTimesOut() throws {
        let f = try OSCFixture(render: false) { $0.syncTimeout = 0.3 }
        f.client.send("/node/new", [.string("player"), .string("p")])
        #expect(f.client.command("/sync", [.int32(1)])?.errorCode == 70)
    }

    @Test func tcpClientsGetRepliesOnTheirConnection() throws {
        let f = try OSCFixture()
        let connection = try TCPConnection(port: f.port)
        try connection.send(OSCPacket.message(OSCMessage("/ping", [.int32(5)])))
        let reply = try connection.receive(timeout: 3)
        #expect(reply == .message(OSCMessage("/pong", [.int32(5)])))
        try connection.send(OSCPacket.message(OSCMessage("/node/new", [.string("player"), .string("t1")])))
        #expect(
            try connection.receive(timeout: 3) == .message(OSCMessage("/done", [.string("/node/new"), .string("t1")])))
    }
}

/// A raw TCP OSC 1.0 connection (4-byte big-endian length prefix per packet).
final class TCPConnection {
    let fd: Int32

    init(port: Int) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(port)).bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else { throw OSCServiceError("connect failed: \(errno)") }
    }

    deinit { close(fd) }

    func send(_ packet: OSCPacket) throws {
        let body = packet.encoded()
        let n = UInt32(body.count)
        let frame = [UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)] + body
        guard frame.withUnsafeBytes({ Glibc.send(fd, $0.baseAddress, $0.count, 0) }) == frame.count else {
            throw OSCServiceError("send failed")
        }
    }

    func receive(timeout: Double) throws -> OSCPacket {
        let header = try read(4, timeout: timeout)
        let length = Int(header[0]) << 24 | Int(header[1]) << 16 | Int(header[2]) << 8 | Int(header[3])
        return try OSCPacket.decode(try read(length, timeout: timeout))
    }

    private func read(_ count: Int, timeout: Double) throws -> [UInt8] {
        var out: [UInt8] = []
        let deadline = Date().addingTimeInterval(timeout)
        while out.count < count {
            var p = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard deadline.timeIntervalSinceNow > 0, poll(&p, 1, 100) >= 0 else { throw OSCServiceError("timeout") }
            if p.revents == 0 { continue }
            var chunk = [UInt8](repeating: 0, count: count - out.count)
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { throw OSCServiceError("closed") }
            out += chunk[0..<n]
        }
        return out
    }
}
