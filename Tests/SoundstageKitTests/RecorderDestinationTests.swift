import AudioFiles
import AudioGraph
import Foundation
import SoundstageKit
import Testing

/// Where a recording goes: an existing file is replaced only when the take is complete, a FIFO gets
/// the finished take, a symbolic link stays a link.
@Suite struct RecorderDestinationTests {
    /// Records `frames` of the looping noise into `path` and stops.
    private static func record(to path: String, frames: Int, whileRecording: () -> Void = {}) throws {
        let engine = try RecorderFixture.engine(playing: RecorderFixture.noise(frames: 48_000))
        let recorder = try Recorder(engine: engine, node: "p", path: path)
        try recorder.record(forDuration: Double(frames) / RecorderFixture.rate)
        _ = RecorderFixture.render(engine, frames: frames / 2)
        whileRecording()
        _ = RecorderFixture.render(engine, frames: frames)
        recorder.stop()
    }

    @Test func anExistingFileIsReplacedOnlyWhenTheTakeIsComplete() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent("take.wav").path
        let old = Data("yesterday's take".utf8)
        try old.write(to: URL(fileURLWithPath: path))
        try Self.record(to: path, frames: 24_000) {
            #expect(FileManager.default.contents(atPath: path) == old, "the old take was touched while recording")
        }
        #expect(try AudioFileReader.load(path: path).frameCount == 24_000)
        let hidden = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".") }
        #expect(hidden.isEmpty, "\(hidden)")
    }

    /// A name that fits the file system (250 bytes) but not with the working file's prefix and suffix
    /// around it: the take beside the old file gets a shortened working name, and replaces it.
    @Test func anExistingFileWithALongNameIsReplacedWhenTheTakeIsComplete() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let path = dir.appendingPathComponent(String(repeating: "ü", count: 123) + ".wav").path
        #expect(URL(fileURLWithPath: path).lastPathComponent.utf8.count == 250)
        try Data("yesterday's take".utf8).write(to: URL(fileURLWithPath: path))
        try Self.record(to: path, frames: 24_000)
        #expect(try AudioFileReader.load(path: path).frameCount == 24_000)
        let hidden = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter { $0.hasPrefix(".") }
        #expect(hidden.isEmpty, "\(hidden)")
    }

    @Test func aFIFOReceivesTheFinishedTake() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let fifo = dir.appendingPathComponent("monitor").path
        try #require(mkfifo(fifo, 0o666) == 0)
        let received = dir.appendingPathComponent("received.wav")
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            if let handle = FileHandle(forReadingAtPath: fifo) { try? handle.readToEnd()?.write(to: received) }
            done.signal()
        }
        let engine = try RecorderFixture.engine(playing: RecorderFixture.noise(frames: 48_000))
        let recorder = try Recorder(
            engine: engine, node: "p", path: fifo, settings: RecorderSettings(format: .wav))
        try recorder.record(forDuration: 0.5)
        _ = RecorderFixture.render(engine, frames: 30_000)
        recorder.stop()
        #expect(done.wait(timeout: .now() + 10) == .success)
        var status = stat()
        lstat(fifo, &status)
        #expect(status.st_mode & S_IFMT == S_IFIFO)
        for (reader, frames) in ReadBack(path: received.path, directory: dir).frameCounts() {
            #expect(frames == 24_000, "\(reader): \(frames.map(String.init) ?? "unreadable")")
        }
    }

    @Test func aSymbolicLinkStaysALinkToTheTake() throws {
        let dir = try Fixtures.temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: dir) }
        let link = dir.appendingPathComponent("latest.flac").path
        try #require(symlink("archive.flac", link) == 0)
        try Self.record(to: link, frames: 24_000)
        var status = stat()
        lstat(link, &status)
        #expect(status.st_mode & S_IFMT == S_IFLNK)
        #expect(try AudioFileReader.load(path: dir.appendingPathComponent("archive.flac").path).frameCount == 24_000)
    }
}
