// Tests (control side). Every descriptor the decoders open is closed exactly once, refused files
// included: a second close would shut whatever file another thread was given the same number for.
import AudioFiles
import Foundation
import Testing

@Suite("Descriptor ownership")
struct DescriptorOwnershipTests {
    /// Descriptors open in this process.
    static func openDescriptorCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }

    /// Files libsndfile refuses after it has been handed the descriptor: random bytes, and a WAV
    /// header that gives 0 Hz.
    static func refusedFiles(in directory: URL) throws -> [String] {
        var generator = SystemRandomNumberGenerator()
        let junk = directory.appendingPathComponent("junk.wav")
        try Data((0..<4_096).map { _ in UInt8.random(in: 0...255, using: &generator) }).write(to: junk)
        var header = Data("RIFF".utf8) + Data([36, 0, 0, 0]) + Data("WAVEfmt ".utf8)
        header += Data([16, 0, 0, 0, 1, 0, 1, 0]) + Data([0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 16, 0])
        header += Data("data".utf8) + Data([0, 0, 0, 0])
        let zeroRate = directory.appendingPathComponent("zero-rate.wav")
        try (header + Data(repeating: 1, count: 64)).write(to: zeroRate)
        return [junk.path, zeroRate.path]
    }

    @Test func refusedFilesLeaveNoDescriptorOpen() throws {
        try withTemporaryDirectory { directory in
            let paths = try Self.refusedFiles(in: directory)
            for path in paths {
                #expect(throws: AudioFileError.self) { try AudioFileReader.info(path: path) }
            }
            let before = Self.openDescriptorCount()
            for _ in 0..<100 {
                for path in paths {
                    _ = try? AudioFileReader.info(path: path)
                    _ = try? AudioFileReader.load(path: path)
                    _ = AudioFileReader.inspect(path: path, verify: true)
                }
            }
            // Other suites open files meanwhile; a leak would add 600.
            #expect(
                Self.openDescriptorCount() - before < 60,
                "\(before) descriptors before, \(Self.openDescriptorCount()) after")
        }
    }

    /// libsndfile refuses the open after it has been given the new file's descriptor: the target
    /// is left as it was and the descriptor is closed once.
    @Test func aWriteLibsndfileRefusesClosesItsDescriptorOnce() throws {
        try withTemporaryDirectory { directory in
            let path = directory.appendingPathComponent("fast.flac").path
            try Data("kept".utf8).write(to: URL(fileURLWithPath: path))
            let before = Self.openDescriptorCount()
            for _ in 0..<100 {
                #expect(throws: AudioFileError.self) {
                    _ = try AudioFileWriter(path: path, sampleRate: 1_000_000, channelCount: 2)
                }
            }
            #expect(Self.openDescriptorCount() - before < 60)
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == Data("kept".utf8))
        }
    }

    /// One thread has files refused while others open, check and close files of their own. Every
    /// one of their descriptors must still be open when they come to close it.
    @Test func refusedFilesNeverCloseAnotherThreadsFile() throws {
        try withTemporaryDirectory { directory in
            let paths = try Self.refusedFiles(in: directory)
            let stop = Atomic(false)
            let lost = Atomic(0)
            let finished = DispatchSemaphore(value: 0)
            let bystanders = (0..<2).map { _ in
                Thread {
                    while !stop.load() {
                        let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
                        guard fd >= 0 else { continue }
                        for _ in 0..<50 where fcntl(fd, F_GETFD) == -1 { lost.increment() }
                        if close(fd) != 0 { lost.increment() }
                    }
                    finished.signal()
                }
            }
            let done = DispatchSemaphore(value: 0)
            for thread in bystanders {
                thread.start()
            }
            let refuser = Thread {
                for _ in 0..<2_000 {
                    for path in paths { _ = try? AudioFileReader.info(path: path) }
                }
                done.signal()
            }
            refuser.start()
            done.wait()
            stop.store(true)
            for _ in bystanders { finished.wait() }
            #expect(lost.load() == 0, "bystanders found \(lost.load()) of their descriptors closed under them")
        }
    }
}

/// A value shared between test threads.
private final class Atomic<Value: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var value: Value
    init(_ value: Value) { self.value = value }
    func load() -> Value { lock.withLock { value } }
    func store(_ newValue: Value) { lock.withLock { value = newValue } }
}

extension Atomic where Value == Int {
    func increment() { lock.withLock { value += 1 } }
}
