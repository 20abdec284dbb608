// libFuzzer entry point: the input's first byte picks the file extension (the reader dispatches on it),
// the rest is the file. Every outcome but a crash, a leak, a timeout or a huge allocation is fine:
// loading either succeeds with finite samples or throws an AudioFileError naming the file.
import AudioFiles
import Foundation

/// Extensions the readers dispatch on (and one they do not know).
let extensions = ["wav", "aiff", "caf", "flac", "ogg", "opus", "mp3", "m4a", "mp4", "aac", "w64", "raw", "xyz"]
let directory: String = {
    let path = NSTemporaryDirectory() + "soundstage-fuzz-\(getpid())"
    try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
    return path
}()

/// libFuzzer's driver (libclang_rt.fuzzer_no_main): parses the command line and runs the callback.
@_silgen_name("LLVMFuzzerRunDriver")
func runFuzzerDriver(
    _ argc: UnsafeMutablePointer<Int32>,
    _ argv: UnsafeMutablePointer<UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>>,
    _ callback: @convention(c) (UnsafePointer<UInt8>?, Int) -> Int32
) -> Int32

@main
enum FileDecodeFuzzer {
    static func main() {
        var argc = CommandLine.argc
        var argv = CommandLine.unsafeArgv
        exit(runFuzzerDriver(&argc, &argv, fuzzOneInput))
    }
}

func fuzzOneInput(_ data: UnsafePointer<UInt8>?, _ size: Int) -> Int32 {
    guard let data, size > 0 else { return 0 }
    let name = directory + "/input." + extensions[Int(data[0]) % extensions.count]
    let bytes = Data(bytes: data + 1, count: size - 1)
    guard FileManager.default.createFile(atPath: name, contents: bytes) else { return 0 }
    defer { unlink(name) }
    if let info = try? AudioFileReader.info(path: name) {
        // Decode at most a few seconds: the harness checks robustness, not throughput.
        if info.frameCount < 48_000 * 30, let audio = try? AudioFileReader.load(path: name, targetSampleRate: 48_000) {
            for channel in audio.channels where channel.contains(where: { !$0.isFinite }) {
                fatalError("non-finite sample decoded from \(name)")
            }
        }
        if let reader = try? AudioFileStreamReader(path: name, targetSampleRate: 44_100) {
            let capacity = 4_096 * max(1, info.channelCount)
            let buffer = UnsafeMutablePointer<Float>.allocate(capacity: capacity)
            defer { buffer.deallocate() }
            var total = 0
            while total < 48_000 * 10, let n = try? reader.read(into: buffer, frames: 4_096), n > 0 { total += n }
        }
    }
    return 0
}
