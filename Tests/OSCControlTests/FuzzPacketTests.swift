// Issue 3, "Bad input": at least 100,000 random and mutated packets (see PacketFuzzer) reach a running
// service over UDP from several source ports, plus length-prefixed frames over TCP, while a real-time
// paced render thread plays looping players through a reverb. Afterwards the service still answers
// /ping, still creates nodes and completes /sync (so the render thread consumes commands), the output
// never held a non-finite sample, and the render thread made no heap allocation, free or lock.
import AudioGraph
import Foundation
import Glibc
@testable import OSCControl
import Testing

extension OSCExternalSerialSuites {
    @Suite struct FuzzPacketTests {
        /// Packets the service must have read (UDP datagrams and TCP frames) within the 45 s budget; a
        /// sanitizer build runs several times slower (the thread sanitizer read 15,000 to 72,000 here,
        /// depending on the machine's load), so it is held to a tenth of that.
        static let target = RenderAllocationCounter.isSanitized ? 10_000 : 100_000
        /// Datagrams in flight before the sender waits for the service (the socket buffer holds a few
        /// hundred small datagrams; beyond that the kernel drops them).
        static let window = 96

        /// Set to true to hold back packets with an empty blob argument. The first fuzz run found that an
        /// echoed empty blob (/ping, /sync) crashed the service (fixed in 1f8efa8; FuzzRegressionTests
        /// replays it against `soundstage run`). A switch for the next such finding, so a crash can be
        /// fenced off while it is fixed without stopping the rest of the fuzz.
        static let holdsBackEmptyBlobs = false

        static func containsEmptyBlob(_ bytes: [UInt8]) -> Bool {
            guard let packet = try? OSCPacket.decode(bytes) else { return false }
            return packet.messages.contains { $0.message.arguments.contains(.blob([])) }
        }

        /// A UDP socket on an ephemeral loopback port; what arrives on it is read and discarded.
        final class Sender {
            let fd: Int32
            var target = sockaddr_in()

            init(port: Int) throws {
                fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
                guard fd >= 0 else { throw ExternalSetupError("socket() failed") }
                target.sin_family = sa_family_t(AF_INET)
                target.sin_port = in_port_t(UInt16(port)).bigEndian
                target.sin_addr.s_addr = inet_addr("127.0.0.1")
                var size: Int32 = 1 << 20
                setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            }

            deinit { close(fd) }

            func send(_ bytes: [UInt8]) {
                _ = bytes.withUnsafeBytes { raw in
                    withUnsafePointer(to: &target) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            sendto(fd, raw.baseAddress, raw.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                        }
                    }
                }
            }

            /// Reads and drops whatever replies are waiting (errors, meters, pongs).
            func drain() -> Int {
                var buffer = [UInt8](repeating: 0, count: 65_536)
                var count = 0
                while buffer.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {
                    count += 1
                }
                return count
            }
        }

        /// A TCP connection that frames packets with a 4-byte length (sometimes a lying one) and reconnects
        /// when the service drops it.
        final class TCPSender {
            let port: Int
            var fd: Int32 = -1
            var reconnects = 0

            init(port: Int) {
                self.port = port
                connectNow()
            }

            deinit { if fd >= 0 { close(fd) } }

            private func connectNow() {
                if fd >= 0 { close(fd) }
                fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
                var addr = sockaddr_in()
                addr.sin_family = sa_family_t(AF_INET)
                addr.sin_port = in_port_t(UInt16(port)).bigEndian
                addr.sin_addr.s_addr = inet_addr("127.0.0.1")
                _ = withUnsafePointer(to: &addr) {
                    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                        Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                    }
                }
                var nonBlocking = fcntl(fd, F_GETFL)
                nonBlocking |= O_NONBLOCK
                _ = fcntl(fd, F_SETFL, nonBlocking)
            }

            func send(_ frame: [UInt8]) {
                let sent = frame.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                var scratch = [UInt8](repeating: 0, count: 4096)
                while scratch.withUnsafeMutableBytes({ recv(fd, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }) > 0 {}
                // A full send buffer (the service stopped reading this connection) or a closed connection.
                if sent < 0 && errno != EAGAIN {
                    reconnects += 1
                    connectNow()
                }
            }
        }

        @Test(.timeLimit(.minutes(2)))
        func hundredThousandHostilePacketsWhileAudioRenders() throws {
            let f = try OSCFixture(render: false) { $0.schedulingHorizon = 3600 }
            // A graph with something to lose: looping players, a submix and a reverb on the render path.
            let sine = (0..<24_000).map { Float(sin(Double($0) * 2 * .pi * 220 / 48_000)) * 0.25 }
            try f.engine.addBuffer(SampleBuffer(name: "loop", channels: [sine], sampleRate: 48_000))
            try f.engine.attach(.mixer, name: "sub")
            try f.engine.attach(.reverb, name: "verb")
            try f.engine.connect("sub", to: "verb")
            try f.engine.connect("verb", to: "main")
            for i in 0..<4 {
                try f.engine.attach(
                    .player, name: "p\(i)",
                    parameters: [
                        "buffer": .string("loop"), "loop": .bool(true),
                        "playing": .bool(true)
                    ])
                try f.engine.connect("p\(i)", to: i < 2 ? "main" : "sub")
            }
            let wav = try f.writeWAV("ok.wav", channels: [Array(sine.prefix(4800))])
            let renderer = CountingRenderer(engine: f.engine)
            renderer.start()
            defer { _ = renderer.stop() }
            // Warm up (first programs taken, buffers touched), then count.
            Thread.sleep(forTimeInterval: 0.5)
            renderer.startMeasuring()

            // A fixed seed, so every run sends the same packets; SOUNDSTAGE_FUZZ_SEED explores others.
            let seed =
                ProcessInfo.processInfo.environment["SOUNDSTAGE_FUZZ_SEED"].flatMap { UInt64($0) }
                ?? 0x0DDB_A11_5EED_2026
            var fuzzer = PacketFuzzer(seed: seed, fileNames: [wav, "ok.wav", "saved.yaml"])
            let senders = try (0..<4).map { _ in try Sender(port: f.port) }
            let tcp = TCPSender(port: f.port)
            var kinds: [PacketFuzzer.Kind: Int] = [:]
            var sentUDP = 0
            var sentTCP = 0
            var waits = 0
            var heldBack = 0
            let start = Date()
            let received0 = f.service.statistics.packetsReceived
            func received() -> Int { f.service.statistics.packetsReceived - received0 }
            while received() < Self.target && Date().timeIntervalSince(start) < 45 {
                for _ in 0..<32 {
                    let (bytes, kind) = fuzzer.packet()
                    if Self.holdsBackEmptyBlobs && Self.containsEmptyBlob(bytes) {
                        heldBack += 1
                        continue
                    }
                    kinds[kind, default: 0] += 1
                    if fuzzer.random.chance(1) {
                        var n = UInt32(bytes.count)
                        if fuzzer.random.chance(20) { n = fuzzer.random.pick([0, 3, 0x7FFF_FFFF, 0xFFFF_FFFF, n + 4]) }
                        let header = [UInt8(n >> 24), UInt8(n >> 16 & 0xFF), UInt8(n >> 8 & 0xFF), UInt8(n & 0xFF)]
                        tcp.send(header + bytes)
                        sentTCP += 1
                    } else {
                        senders[fuzzer.random.below(senders.count)].send(bytes)
                        sentUDP += 1
                    }
                }
                // Keep at most `window` datagrams in flight, so they are read rather than dropped.
                let waitStart = Date()
                while sentUDP - received() > Self.window && Date().timeIntervalSince(waitStart) < 0.05 {
                    usleep(200)
                    waits += 1
                }
                if sentUDP % 2048 < 32 { for s in senders { _ = s.drain() } }
            }
            let fuzzSeconds = Date().timeIntervalSince(start)
            for s in senders { _ = s.drain() }

            // Still answering: /ping (UDP may drop under the flood's tail, so ask a few times).
            let pong = OSCMessage("/pong", [.int32(4242)])
            var answered = false
            for _ in 0..<20 where !answered {
                f.client.send("/ping", [.int32(4242)])
                answered = f.client.receive(timeout: 0.5) { $0 == pong }.contains(pong)
            }
            #expect(answered, "no /pong after the fuzz")
            // Still working: a node can be created and /sync completes (the render thread consumed it).
            let created = f.client.command("/node/new", [.string("mixer"), .string("afterFuzz")], timeout: 10)
            #expect(created?.address == "/done", Comment(rawValue: "\(String(describing: created))"))
            let synced = f.client.request("/sync", [.int32(77)], reply: "/synced", timeout: 10)
            #expect(synced?.arguments == [.int32(77)])
            let framesBefore = renderer.frames
            Thread.sleep(forTimeInterval: 0.3)
            #expect(renderer.frames > framesBefore, "the render thread stopped")

            let report = try #require(renderer.stop())
            let stats = f.service.statistics
            let drops = LoopbackUDP.kernelDrops(port: f.port)
            let summary =
                "fuzz (seed \(seed)): \(sentUDP) UDP + \(sentTCP) TCP packets in "
                + String(format: "%.1f s; ", fuzzSeconds)
                + "service read \(received()) (malformed \(stats.malformedPackets), "
                + "oversized \(stats.oversizedPackets), "
                + "dispatched messages \(stats.messagesDispatched), /error sent \(stats.errorsSent), suppressed "
                + "\(stats.errorsSuppressed), late \(stats.lateBundles), liblo errors \(stats.libloErrors)); "
                + "kernel drops \(drops.map(String.init) ?? "?"); held back (empty blob) \(heldBack); "
                + "TCP reconnects \(tcp.reconnects); sender waits \(waits); kinds "
                + PacketFuzzer.Kind.allCases.map { "\($0.rawValue) \(kinds[$0, default: 0])" }.joined(separator: ", ")
                + "; render: \(report.measuredFrames) frames measured, allocations \(report.allocations), frees "
                + "\(report.frees), locks \(report.locks), non-finite samples \(report.nonFiniteSamples), periods "
                + "slower than real time \(report.slowPeriods), longest render "
                + String(format: "%.0f µs", report.longestRenderMicroseconds)
            print(summary)
            #expect(received() >= Self.target, Comment(rawValue: summary))
            #expect(stats.malformedPackets > Self.target / 5, Comment(rawValue: summary))
            #expect(stats.oversizedPackets > Self.target / 200, Comment(rawValue: summary))
            #expect(stats.errorsSuppressed > 0, "errors were not rate-limited: \(summary)")
            #expect(report.nonFiniteSamples == 0, Comment(rawValue: summary))
            #expect(report.measuredFrames > 48_000, Comment(rawValue: summary))
            if RenderAllocationCounter.isSanitized {
                // The sanitizer owns malloc here; the plain build counts the render thread's calls.
            } else if let reason = RenderAllocationCounter.unavailableReason {
                Issue.record("render-thread allocations not counted: \(reason)")
            } else {
                #expect(report.counterSawProbe, "the allocation counter did not see a deliberate malloc")
                #expect(report.allocations == 0, Comment(rawValue: summary))
                #expect(report.frees == 0, Comment(rawValue: summary))
                #expect(report.locks == 0, Comment(rawValue: summary))
            }
        }
    }
}
