// Test support: a liblo UDP client, a real-time-paced render thread that records the output, a mock
// JACK host, and a fixture that wires an engine, the service and a client on random loopback ports.
import AudioFiles
import AudioGraph
import CLibLo
import Foundation
import Glibc
@testable import OSCControl
import SoundstageKit
import Synchronization

/// A UDP client using liblo to send (from its own server socket, so replies come back to it) and
/// reading replies as raw datagrams (so tests can check datagram sizes), decoded with `OSCPacket`.
final class OSCTestClient {
    let server: lo_server
    let target: lo_address
    let socket: Int32
    /// Datagrams received and not consumed yet.
    private(set) var pending: [(message: OSCMessage, datagramSize: Int, isBundle: Bool)] = []

    init(port: Int) {
        server = lo_server_new_with_proto(nil, LO_UDP, nil)!
        target = lo_address_new("127.0.0.1", String(port))!
        socket = lo_server_get_socket_fd(server)
    }

    deinit {
        lo_address_free(target)
        lo_server_free(server)
    }

    /// The URL of this client's socket (for /notify).
    var url: String { "osc.udp://127.0.0.1:\(lo_server_get_port(server))/" }

    func send(_ address: String, _ arguments: [OSCArgument] = []) {
        let m = LoValues.message(arguments)
        defer { lo_message_free(m) }
        _ = lo_send_message_from(target, server, address, m)
    }

    /// Sends a bundle; nested groups become nested bundles with their own time tags.
    func sendBundle(_ tag: OSCTimetag, _ messages: [OSCMessage], nested: [(OSCTimetag, [OSCMessage])] = []) {
        let bundle = lo_bundle_new(lo_timetag(sec: tag.seconds, frac: tag.fraction))!
        for message in messages {
            _ = lo_bundle_add_message(bundle, message.address, LoValues.message(message.arguments))
        }
        for (innerTag, innerMessages) in nested {
            let inner = lo_bundle_new(lo_timetag(sec: innerTag.seconds, frac: innerTag.fraction))!
            for message in innerMessages {
                _ = lo_bundle_add_message(inner, message.address, LoValues.message(message.arguments))
            }
            _ = lo_bundle_add_bundle(bundle, inner)
        }
        _ = lo_send_bundle_from(target, server, bundle)
        lo_bundle_free_recursive(bundle)
    }

    /// Sends raw bytes as one datagram from the client's socket.
    func sendRaw(_ bytes: [UInt8]) {
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = in_port_t(UInt16(String(cString: lo_address_get_port(target)))!).bigEndian
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        _ = bytes.withUnsafeBytes { raw in
            withUnsafePointer(to: &addr) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    sendto(socket, raw.baseAddress, raw.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
        }
    }

    /// Reads datagrams for up to `timeout` seconds (returns early once `until` holds for a message).
    @discardableResult
    func receive(timeout: Double, until: ((OSCMessage) -> Bool)? = nil) -> [OSCMessage] {
        let deadline = Date().addingTimeInterval(timeout)
        var received: [OSCMessage] = []
        var buffer = [UInt8](repeating: 0, count: 70_000)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            if remaining <= 0 { break }
            var fds = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            guard poll(&fds, 1, Int32(max(1, remaining * 1000))) > 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            guard n > 0 else { continue }
            guard let packet = try? OSCPacket.decode(Array(buffer[0..<n])) else { continue }
            var isBundle = false
            if case .bundle = packet { isBundle = true }
            for (message, _) in packet.messages {
                received.append(message)
                pending.append((message, n, isBundle))
            }
            if let until, received.contains(where: until) { break }
        }
        return received
    }

    /// Takes every received datagram message matching `address`.
    func take(_ address: String) -> [OSCMessage] {
        let hits = pending.filter { $0.message.address == address }.map(\.message)
        pending.removeAll { $0.message.address == address }
        return hits
    }

    /// All received (message, datagram size, in a bundle) records, cleared.
    func takeAll() -> [(message: OSCMessage, datagramSize: Int, isBundle: Bool)] {
        defer { pending = [] }
        return pending
    }

    /// Sends and waits for the first message whose address is `reply` (default: the same address).
    func request(
        _ address: String, _ arguments: [OSCArgument] = [], reply: String? = nil,
        timeout: Double = 3
    ) -> OSCMessage? {
        send(address, arguments)
        let wanted = reply ?? address
        receive(timeout: timeout) { $0.address == wanted }
        return take(wanted).first
    }

    /// Sends and waits for `/done address` or `/error address`.
    func command(_ address: String, _ arguments: [OSCArgument] = [], timeout: Double = 5) -> OSCMessage? {
        send(address, arguments)
        return awaitOutcome(address, timeout: timeout)
    }

    /// Waits for `/done address …` or `/error address …`.
    func awaitOutcome(_ address: String, timeout: Double = 5) -> OSCMessage? {
        func matches(_ m: OSCMessage) -> Bool {
            (m.address == "/done" || m.address == "/error") && m.arguments.first == .string(address)
        }
        if let index = pending.firstIndex(where: { matches($0.message) }) {
            return pending.remove(at: index).message
        }
        receive(timeout: timeout, until: matches)
        guard let index = pending.firstIndex(where: { matches($0.message) }) else { return nil }
        return pending.remove(at: index).message
    }

    /// Errors received so far (removed from the pending list).
    func takeErrors() -> [OSCMessage] { take("/error") }
}

extension OSCMessage {
    /// The error code of an `/error` reply.
    var errorCode: Int32? {
        guard address == "/error", arguments.count == 3, case .int32(let code) = arguments[1] else { return nil }
        return code
    }
}

/// Renders an engine in real time on its own thread (like a JACK period callback), recording the first
/// output channels.
final class PacedRenderer: @unchecked Sendable {
    let engine: Engine
    let period: Int
    let channels: Int
    let capacity: Int
    let storage: UnsafeMutablePointer<Float>
    private let recorded = Atomic<Int>(0)
    private let stopFlag = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private var started = false

    init(engine: Engine, period: Int = 256, seconds: Double = 30) {
        self.engine = engine
        self.period = period
        channels = engine.configuration.outputChannelCount
        capacity = Int(seconds * engine.configuration.sampleRate)
        storage = .allocate(capacity: capacity * channels)
        storage.initialize(repeating: 0, count: capacity * channels)
    }

    deinit {
        stop()
        storage.deallocate()
    }

    func start() {
        started = true
        let thread = Thread { [self] in self.loop() }
        thread.name = "paced-render"
        thread.start()
    }

    func stop() {
        guard started else { return }
        started = false
        stopFlag.store(true, ordering: .releasing)
        finished.wait()
    }

    /// Frames recorded so far.
    var frameCount: Int { recorded.load(ordering: .acquiring) }

    /// Recorded samples of channel `c` (frames 0..<frameCount).
    func channel(_ c: Int) -> [Float] {
        let n = frameCount
        return (0..<n).map { storage[$0 * channels + c] }
    }

    private func loop() {
        let rate = engine.configuration.sampleRate
        let block = UnsafeMutablePointer<Float>.allocate(capacity: period * channels)
        let pointers = UnsafeMutablePointer<UnsafeMutablePointer<Float>?>.allocate(capacity: channels)
        for c in 0..<channels { pointers[c] = block + c * period }
        defer {
            block.deallocate()
            pointers.deallocate()
            finished.signal()
        }
        var next = Self.now()
        let periodSeconds = Double(period) / rate
        while !stopFlag.load(ordering: .acquiring) {
            engine.renderEngine.render(
                frameCount: period, inputs: nil, inputCount: 0,
                outputs: UnsafePointer(pointers), outputCount: channels)
            let done = recorded.load(ordering: .relaxed)
            if done + period <= capacity {
                for f in 0..<period {
                    for c in 0..<channels { storage[(done + f) * channels + c] = block[c * period + f] }
                }
                recorded.store(done + period, ordering: .releasing)
            }
            next += periodSeconds
            let wait = next - Self.now()
            if wait > 0 { usleep(UInt32(wait * 1e6)) } else if wait < -0.1 { next = Self.now() }
        }
    }

    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    /// First frame at or after `from` where channel `c`'s magnitude exceeds `threshold`.
    func onset(channel c: Int, from: Int = 0, threshold: Float = 0.25) -> Int? {
        let n = frameCount
        var f = from
        while f < n {
            if abs(storage[f * channels + c]) > threshold { return f }
            f += 1
        }
        return nil
    }
}

/// A JACK host stand-in: records connections, reports a fixed status, counts quits.
final class MockHost: OSCHost, @unchecked Sendable {
    private let lock = Mutex<(edges: [(String, String)], quits: Int)>(([], 0))
    let ports = ["soundstage:out_1", "soundstage:out_2", "system:playback_1", "system:playback_2"]

    /// What `status()` reports as the host's state ("server-lost": the server just died).
    let state = Mutex("running")

    func status() -> OSCHostStatus {
        OSCHostStatus(
            state: state.withLock { $0 }, sampleRate: 48_000, bufferSize: 256, dspLoad: 1.5, xrunCount: 3,
            serverName: "mock", clientName: "soundstage")
    }

    /// Closed (`wait()` on it), every `connect` waits until it opens again: a server slow to answer.
    let connectGate = DispatchSemaphore(value: 1)

    func connect(_ source: String, to destination: String) throws(OSCHostError) {
        connectGate.wait()
        connectGate.signal()
        guard ports.contains(source), ports.contains(destination) else {
            throw OSCHostError("no such port")
        }
        lock.withLock { $0.edges.append((source, destination)) }
    }

    func disconnect(_ source: String, from destination: String) throws(OSCHostError) {
        let removed = lock.withLock { state -> Bool in
            guard let i = state.edges.firstIndex(where: { $0.0 == source && $0.1 == destination }) else { return false }
            state.edges.remove(at: i)
            return true
        }
        if !removed { throw OSCHostError("not connected") }
    }

    func listConnections() -> [(source: String, destination: String)] {
        lock.withLock { $0.edges.map { (source: $0.0, destination: $0.1) } }
    }

    /// Connections the host will make again (a lost server's), beside the live ones.
    let pending = Mutex<[(String, String)]>([])

    func savedConnections() -> [(source: String, destination: String)] {
        listConnections() + pending.withLock { $0.map { (source: $0.0, destination: $0.1) } }
    }

    func quit() { lock.withLock { $0.quits += 1 } }

    var quitCount: Int { lock.withLock { $0.quits } }

    /// Grants any period asked for, and remembers it.
    func requestBufferSize(frames: Int) throws(OSCHostError) -> Int {
        requestedPeriods.withLock { $0.append(frames) }
        return frames
    }

    let requestedPeriods = Mutex<[Int]>([])

    /// The properties last published.
    func publishProperties(_ properties: [String: String], writingLast last: [String]) {
        published.withLock { $0 = properties }
    }

    let published = Mutex<[String: String]>([:])
}

/// Engine + paced render thread + OSC service + client, all on loopback with random ports.
final class OSCFixture {
    let engine: Engine
    let renderer: PacedRenderer
    let service: OSCService
    let client: OSCTestClient
    let port: Int
    let directory: String

    init(
        host: OSCHost? = nil, lease: Double = 10, outputs: Int = 2, inputs: Int = 0, render: Bool = true,
        configure: (inout OSCServiceOptions) -> Void = { _ in }
    ) throws {
        directory = NSTemporaryDirectory() + "osc-tests-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let rate = 48_000.0
        engine = Engine(
            configuration: EngineConfiguration(
                sampleRate: rate, blockFrames: 64, outputChannelCount: outputs, inputChannelCount: inputs),
            fileLoader: { path, rate in
                let data = try AudioFileReader.load(path: path, targetSampleRate: rate)
                return SampleBuffer(name: "file", channels: data.channels, sampleRate: rate)
            }, hrtfSets: .sofaFiles)
        renderer = PacedRenderer(engine: engine)
        var options = OSCServiceOptions(port: 0, fileRoots: [directory], leaseDuration: lease, pollsEngine: true)
        configure(&options)
        service = OSCService(engine: engine, host: host, options: options)
        port = try service.start()
        client = OSCTestClient(port: port)
        if render { renderer.start() }
    }

    deinit {
        service.stop()
        renderer.stop()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Writes a WAV file into the fixture's file root and returns its path.
    func writeWAV(_ name: String, channels: [[Float]], rate: Double = 48_000) throws -> String {
        let path = directory + "/" + name
        try AudioFileWriter.write(AudioData(channels: channels, sampleRate: rate), to: path)
        return path
    }

    /// A buffer of `frames` frames that is 0 except a unit impulse at frame 0 (a click).
    static func click(frames: Int = 4800) -> [Float] {
        var samples = [Float](repeating: 0, count: frames)
        samples[0] = 1
        return samples
    }
}
