// Single packets the fuzz found fatal, replayed against `soundstage run` in a child process, so a crash
// fails this test instead of killing the test runner. Each must leave the engine alive and answering.
import Foundation
@testable import OSCControl
import Testing

extension OSCExternalSerialSuites {
    @Suite(.needsJackAndSoundstage)
    struct FuzzRegressionTests {
        /// Sends `packet` to a fresh `soundstage run`, then expects the process alive and a /pong.
        private func survives(_ packet: [UInt8]) throws -> (alive: Bool, output: String) {
            let server = try DummyJackServer()
            let folder = NSTemporaryDirectory() + "osct-regress-\(UUID().uuidString)"
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let patch = folder + "/two-clicks.yaml"
            try ExternalPatches.twoClicks.write(toFile: patch, atomically: true, encoding: .utf8)
            let run = try SoundstageRun(patch: patch, server: server, clientName: "ss_regress")
            let client = OSCTestClient(port: run.port)
            client.sendRaw(packet)
            client.receive(timeout: 0.5)
            let pong = client.request("/ping", [.int32(1)], reply: "/pong", timeout: 2)
            return (run.child.isRunning && pong != nil, run.child.output)
        }

        /// `/ping` with a zero-length blob: the service echoes the arguments, liblo's lo_blob_new(0) returns
        /// NULL, and serialising the reply dereferences it (SIGSEGV in lo_blobsize).
        @Test func pingWithAnEmptyBlob() throws {
            let packet = OSCPacket.message(OSCMessage("/ping", [.blob([])])).encoded()
            #expect(packet == Array("/ping\0\0\0,b\0\0".utf8) + [0, 0, 0, 0])
            let (alive, output) = try survives(packet)
            #expect(alive, Comment(rawValue: String(output.suffix(2500))))
        }

        /// `/sync` with a zero-length blob as its id: echoed in `/synced`, same crash.
        @Test func syncWithAnEmptyBlobID() throws {
            let (alive, output) = try survives(OSCPacket.message(OSCMessage("/sync", [.blob([])])).encoded())
            #expect(alive, Comment(rawValue: String(output.suffix(2500))))
        }
    }
}
