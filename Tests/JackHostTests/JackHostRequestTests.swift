// Requests to the JACK server from two threads at once: libjack reads each reply in pieces off one
// socket per client, with no lock, so unserialized requests read each other's replies (a port index
// that names no port, then every later reply off by one, then libjack's own assertion).
import AudioGraph
import CJack
import Foundation
import Synchronization
@testable import JackHost
import Testing

extension JackHostTests {
    @Suite("Server requests")
    struct ServerRequests {
        @Test func portWorkAndLookupsOnTwoThreadsGetTheirOwnReplies() throws {
            let server = try PrivateJackServer()
            let fixture = try EQInsertHost(server: server)
            defer { fixture.stop() }
            let (engine, host, client, probe) = (fixture.engine, fixture.host, fixture.client, fixture.probe)

            // One thread registers and unregisters the insert's four ports, 60 times; the other asks
            // the server about clients and sets our metadata (requests made under the state lock
            // only) until the first is done.
            let done = Atomic<Bool>(false)
            let lookups = Atomic<Int>(0)
            let wrongAnswers = Atomic<Int>(0)
            let looker = Thread {
                var i = 0
                while !done.load(ordering: .acquiring) {
                    if !host.clientExists(client) || host.clientExists("nobody-\(i)") {
                        wrongAnswers.wrappingAdd(1, ordering: .relaxed)
                    }
                    host.setClientProperties(["urn:soundstage:test": "\(i)"])
                    lookups.wrappingAdd(1, ordering: .relaxed)
                    i += 1
                }
            }
            looker.start()
            for i in 0..<60 {
                try engine.set("eq", "insert", to: .bool(i % 2 == 0))
                _ = host.insertPortNames  // waits until the layout is applied
            }
            try engine.set("eq", "insert", to: .bool(true))
            let ports = try #require(host.insertPortNames["eq"])
            done.store(true, ordering: .releasing)
            while !looker.isFinished { usleep(1_000) }

            #expect(lookups.load(ordering: .relaxed) > 20, "the lookups overlapped the port work")
            #expect(wrongAnswers.load(ordering: .relaxed) == 0, "client lookups answered with another request's reply")
            #expect(ports.inputs == ["\(client):eq_in_1", "\(client):eq_in_2"])
            #expect(ports.outputs == ["\(client):eq_out_1", "\(client):eq_out_2"])
            for name in ports.inputs + ports.outputs {
                #expect(probe.portExists(name), "\(name) is not on the server")
            }
            #expect(host.isRunning)
            #expect(host.connect("\(client):out_1", to: "\(client):eq_in_1").isConnected)
        }

        @Test func aRegistrationResultIsKeptOnlyWhenItIsOurPortOfThatName() throws {
            let server = try PrivateJackServer()
            let engine = Engine(configuration: EngineConfiguration(sampleRate: 48_000, blockFrames: 64))
            let host = JackHost(
                configuration: JackHostConfiguration(serverName: server.name, outputChannelCount: 2),
                renderEngine: engine.renderEngine)
            _ = try host.start()
            defer { host.stop() }
            let probe = try JackToneSource(server: server.name, frequency: 100, amplitude: 0)
            defer { probe.close() }
            let names = try #require(
                host.withClientAndName { client, name -> [String?] in
                    let ours = jack_port_by_name(client, name + ":out_1")!
                    let theirs = jack_port_by_name(client, probe.portName)!
                    return [
                        JackPorts.ownName(client: client, port: ours, shortName: "out_1"),
                        JackPorts.ownName(client: client, port: ours, shortName: "out_2"),
                        JackPorts.ownName(client: client, port: theirs, shortName: "out"),
                        // What a reply read half by another thread held (an index beyond every port).
                        JackPorts.ownName(
                            client: client, port: OpaquePointer(bitPattern: 0xFFFF_FFFF)!, shortName: "x"),
                        // A port registered under a name already ours is looked up, not trusted.
                        JackPorts.register(client: client, shortName: "out_1", flags: UInt(JackPortIsOutput.rawValue))?
                            .name,
                        JackPorts.register(client: client, shortName: "out_1", flags: UInt(JackPortIsInput.rawValue))?
                            .name
                    ]
                })
            let client = try #require(host.actualClientName)
            #expect(names[0] == "\(client):out_1")
            #expect(names[1] == nil, "our port under another name")
            #expect(names[2] == nil, "another client's port")
            #expect(names[3] == nil, "an index that names no port")
            #expect(names[4] == "\(client):out_1", "the existing port of that name and direction")
            #expect(names[5] == nil, "the existing port has the other direction")
        }
    }
}
