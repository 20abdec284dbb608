import AudioFiles
import Foundation
import Testing

/// `OutputDestination` through `AudioFileWriter`: what each kind of destination ends up holding.
@Suite struct OutputDestinationTests {
    private static let audio = AudioData(
        channels: [(0..<4_800).map { Float($0 % 100) / 200 }, (0..<4_800).map { -Float($0 % 50) / 100 }],
        sampleRate: 48_000)

    /// Names in `directory` that start with a dot (working files left behind).
    private static func hiddenFiles(in directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(".") }
    }

    @Test func anExistingFileKeepsItsContentUntilCloseAndItsPermissions() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("take.wav").path
            let old = Data("the only copy".utf8)
            try old.write(to: URL(fileURLWithPath: path))
            chmod(path, 0o640)
            let writer = try AudioFileWriter(path: path, sampleRate: 48_000, channelCount: 2)
            try writer.write(channels: Self.audio.channels)
            #expect(FileManager.default.contents(atPath: path) == old, "replaced before close()")
            try writer.close()
            #expect(try AudioFileReader.load(path: path).channels == Self.audio.channels)
            var status = stat()
            stat(path, &status)
            #expect(status.st_mode & 0o777 == 0o640)
            #expect(try Self.hiddenFiles(in: directory).isEmpty)
        }
    }

    @Test func anAbandonedWriterLeavesTheOldFileAndNoWorkingFile() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("take.flac").path
            let old = Data("the only copy".utf8)
            try old.write(to: URL(fileURLWithPath: path))
            do {
                let writer = try AudioFileWriter(path: path, sampleRate: 48_000, channelCount: 2)
                try writer.write(channels: Self.audio.channels)
                writer.discard()
            }
            do {
                // Dropped without close() or discard().
                let writer = try AudioFileWriter(path: path, sampleRate: 48_000, channelCount: 2)
                try writer.write(channels: Self.audio.channels)
            }
            #expect(FileManager.default.contents(atPath: path) == old)
            #expect(try Self.hiddenFiles(in: directory).isEmpty)
        }
    }

    @Test func aFIFOIsWrittenThroughAndStaysAFIFO() throws {
        try withTemporaryDirectory { directory in
            let fifo = directory.appendingPathComponent("sink").path
            try #require(mkfifo(fifo, 0o666) == 0)
            // The reader: a thread that opens the FIFO and reads it to the end.
            let received = directory.appendingPathComponent("received.wav")
            let done = DispatchSemaphore(value: 0)
            Thread.detachNewThread {
                if let handle = FileHandle(forReadingAtPath: fifo) {
                    try? handle.readToEnd()?.write(to: received)
                }
                done.signal()
            }
            try AudioFileWriter.write(Self.audio, to: fifo, format: .wav)
            #expect(done.wait(timeout: .now() + 10) == .success)
            var status = stat()
            lstat(fifo, &status)
            #expect(status.st_mode & S_IFMT == S_IFIFO)
            #expect(try AudioFileReader.load(path: received.path).channels == Self.audio.channels)
        }
    }

    @Test func aChainOfLinksIsFollowedToAFileThatDoesNotExistYet() throws {
        try withTemporaryDirectory { directory in
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent("a"), withIntermediateDirectories: true)
            let first = directory.appendingPathComponent("first.caf").path
            try #require(symlink("a/second.caf", first) == 0)
            try #require(symlink("../target.caf", directory.appendingPathComponent("a/second.caf").path) == 0)
            try AudioFileWriter.write(Self.audio, to: first)
            var status = stat()
            lstat(first, &status)
            #expect(status.st_mode & S_IFMT == S_IFLNK)
            let target = directory.appendingPathComponent("target.caf").path
            #expect(try AudioFileReader.load(path: target).channels == Self.audio.channels)
        }
    }

    @Test(.enabled(if: getuid() == 0, "mknod needs root"))
    func aBlockDeviceIsRefusedUntouched() throws {
        try withTemporaryDirectory { directory in
            let device = directory.appendingPathComponent("disk").path
            // A loop device node (major 7): never opened, only refused.
            try #require(mknod(device, S_IFBLK | 0o600, dev_t(7 << 8 | 200)) == 0)
            let error = #expect(throws: AudioFileError.self) {
                try AudioFileWriter.write(Self.audio, to: device, format: .wav)
            }
            #expect(error == .notARegularFile(path: device, kind: "a block device"))
            #expect(try Self.hiddenFiles(in: directory).isEmpty)
        }
    }

    /// A writer killed outright leaves its working file; the next write of the same target removes it,
    /// and keeps a live writer's and other targets'.
    @Test func aKilledWritersWorkingFileIsRemovedByTheNextWrite() throws {
        try withTemporaryDirectory { directory in
            let ended = Process()
            ended.executableURL = URL(fileURLWithPath: "/bin/true")
            try ended.run()
            ended.waitUntilExit()
            let dead = ended.processIdentifier
            let abandoned = ".take.wav.partial-\(dead)-1"
            let live = ".take.wav.partial-\(getppid())-1"
            let other = ".other.wav.partial-\(dead)-1"
            for name in [abandoned, live, other] {
                _ = FileManager.default.createFile(
                    atPath: directory.appendingPathComponent(name).path, contents: Data("half".utf8))
            }
            try AudioFileWriter.write(Self.audio, to: directory.appendingPathComponent("take.wav").path)
            let left = try Self.hiddenFiles(in: directory)
            #expect(Set(left) == [live, other], "\(left)")
        }
    }
}
