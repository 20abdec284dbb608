// Recorders over OSC refuse at /recorder/new what they could not record: another recorder's file, a
// name or encoding the file cannot take, a bus the node does not have. And a take cut by a full disk
// reports the frames its file holds.
import AudioFiles
import AudioGraph
import DSPTestSupport
import Foundation
@testable import OSCControl
import Testing

@Suite struct OSCRecorderRefusalTests {
    /// The message of an `/error` reply.
    static func message(_ reply: OSCMessage?) -> String {
        guard let reply, reply.arguments.count == 3, case .string(let text) = reply.arguments[2] else { return "" }
        return text
    }

    @Test func aSecondRecorderOnTheSameFileIsRefusedNamingTheFirst() throws {
        let f = try OSCFixture()
        try FileManager.default.createDirectory(atPath: f.directory + "/takes", withIntermediateDirectories: true)
        #expect(symlink(f.directory + "/takes", f.directory + "/latest") == 0)
        let first = f.client.command("/recorder/new", [.string("p1"), .string("main"), .string("takes/same.wav")])
        #expect(first?.address == "/done", "\(String(describing: first))")
        // The same file, spelled three ways: as given, through `..`, through a link to its folder.
        for spelling in ["takes/same.wav", "takes/../takes/same.wav", "latest/same.wav"] {
            let second = f.client.command("/recorder/new", [.string("p2"), .string("main"), .string(spelling)])
            #expect(second?.errorCode == 73, "\(spelling): \(String(describing: second))")
            let text = Self.message(second)
            #expect(text.contains("is already the file of recorder 'p1'"), "\(text)")
            #expect(text.contains("/recorder/p1/free"), "\(text)")
        }
        #expect(f.client.command("/recorder/p2/record")?.errorCode == 10, "the refused recorder does not exist")
        // Another file is fine, and so is the same file once the first recorder is freed.
        #expect(
            f.client.command("/recorder/new", [.string("p3"), .string("main"), .string("takes/other.wav")])?.address
                == "/done")
        #expect(f.client.command("/recorder/p1/free")?.address == "/done")
        #expect(
            f.client.command("/recorder/new", [.string("p2"), .string("main"), .string("latest/same.wav")])?.address
                == "/done")
    }

    @Test func settingsTheFileCannotTakeAreRefusedAtCreation() throws {
        let f = try OSCFixture()
        let longName = String(repeating: "a", count: 296) + ".wav"
        let cases: [(path: String, settings: [OSCArgument], code: Int32, says: String)] = [
            (longName, [], 42, "its file name is 300 bytes long; a file name here can have at most 255 bytes"),
            ("x.flac", [.string("encoding"), .string("float32")], 42, "FLAC stores integers only; use int16 or int24"),
            (
                "x.m4a", [.string("format"), .string("alac"), .string("encoding"), .string("float32")], 42,
                "ALAC (M4A) stores integers only"
            ),
            ("x.mp3", [.string("encoding"), .string("int24")], 42, "MP3 is lossy and has no sample encoding"),
            ("x.ogg", [.string("encoding"), .string("int16")], 42, "Ogg Vorbis is lossy and has no sample encoding"),
            ("x.m4a", [.string("encoding"), .string("int16")], 42, "AAC (M4A) is lossy and has no sample encoding"),
            ("x.wav", [.string("quality"), .float(0.5)], 22, "quality applies only to the lossy formats"),
            ("x.flac", [.string("quality"), .float(0.5)], 22, "FLAC is lossless: 'encoding' sets its precision")
        ]
        for (index, c) in cases.enumerated() {
            let reply = f.client.command(
                "/recorder/new", [.string("r\(index)"), .string("main"), .string(c.path)] + c.settings)
            #expect(reply?.errorCode == c.code, "\(c.path) \(c.settings): \(String(describing: reply))")
            #expect(Self.message(reply).contains(c.says), "\(Self.message(reply))")
        }
        // What each format can store is accepted.
        let accepted: [(String, [OSCArgument])] = [
            ("a.wav", [.string("encoding"), .string("int16")]), ("b.flac", [.string("encoding"), .string("int16")]),
            ("c.caf", [.string("encoding"), .string("float32")]), ("d.mp3", [.string("quality"), .float(0.2)]),
            ("e.m4a", [.string("format"), .string("alac"), .string("encoding"), .string("int24")])
        ]
        for (index, (path, settings)) in accepted.enumerated() {
            let reply = f.client.command(
                "/recorder/new", [.string("ok\(index)"), .string("main"), .string(path)] + settings)
            #expect(reply?.address == "/done", "\(path): \(String(describing: reply))")
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: f.directory)
        #expect(files.isEmpty, "nothing is written before record: \(files)")
    }

    @Test func aBusTheNodeDoesNotHaveIsNamedWithTheBusesItHas() throws {
        let f = try OSCFixture()
        let reply = f.client.command("/recorder/new", [.string("q"), .string("main:5"), .string("q.wav")])
        #expect(reply?.errorCode == 30, "\(String(describing: reply))")
        #expect(
            Self.message(reply).contains("'main' has no output bus 5: it has 1 output bus (bus 0)"),
            "\(Self.message(reply))")
        let malformed = f.client.command("/recorder/new", [.string("q"), .string("main:x"), .string("q.wav")])
        #expect(malformed?.errorCode == 30, "\(String(describing: malformed))")
        let bus0 = f.client.command("/recorder/new", [.string("q"), .string("main:0"), .string("q.wav")])
        #expect(bus0?.address == "/done", "\(String(describing: bus0))")
        #expect(f.client.command("/recorder/q/record", [.float(0.1)])?.address == "/done")
        f.client.receive(timeout: 1)
        #expect(f.client.command("/recorder/q/stop")?.arguments.last == .int32(4_800))
        #expect(try AudioFileReader.load(path: f.directory + "/q.wav").frameCount == 4_800)
    }

    /// A WAV take into a 256 KB tmpfs: it ends with an error saying the disk is full, and `/done stop`
    /// reports exactly the frames the file holds.
    @Test(.enabled(if: SmallDisk.isAvailable, Comment(rawValue: SmallDisk.unavailableReason)))
    func aTakeCutByAFullDiskReportsTheFramesItsFileHolds() throws {
        let f = try OSCFixture()
        let disk = try SmallDisk(bytes: 256 * 1024, under: f.directory)
        defer { disk.unmount() }
        let name = URL(fileURLWithPath: disk.path).lastPathComponent
        try f.playLoopingDC(0.25)
        #expect(f.client.command("/notify", [.int32(1)])?.address == "/done")
        #expect(
            f.client.command("/recorder/new", [.string("full"), .string("p"), .string("\(name)/full.wav")])?.address
                == "/done")
        #expect(f.client.command("/recorder/full/record")?.address == "/done")
        f.client.receive(timeout: 10) { $0.address == "/recorder/finished" }
        #expect(f.client.take("/recorder/finished").first?.arguments == [.string("full"), .int32(0)])
        let path = disk.path + "/full.wav"
        let error = f.client.take("/recorder/error").first
        let text = error.flatMap { $0.arguments.last }.flatMap { if case .string(let s) = $0 { s } else { nil } } ?? ""
        #expect(text.contains("Cannot write '\(path)': the disk is full (no space left on device)."), "\(text)")
        let stopped = f.client.command("/recorder/full/stop")
        let held = try AudioFileReader.load(path: path).frameCount
        #expect(held > 40_000)
        #expect(stopped?.arguments == [.string("/recorder/full/stop"), .int32(Int32(held))], "file holds \(held)")
        #expect(text.contains("The file keeps the take's first \(held) frames"), "\(text)")
        let status = try #require(f.client.request("/recorder/full/status"))
        #expect(status.arguments[2] == .int64(Int64(held)), "\(status)")
    }
}
