// Decode speed per format, on one thread: the same 60 s of stereo 48 kHz audio written as WAV, FLAC,
// Ogg Vorbis, Opus, MP3, AAC and ALAC, then decoded (a) whole, as a preload does
// (AudioFileReader.load), and (b) in 4,096-frame chunks through AudioFileStreamReader, as the disk
// thread does. Reports decoded frames per second of CPU and × real time (median of the repeats), and
// the heap an open stream holds once it has decoded its first chunk (the decoder's state).
//
//   swift run --package-path Benchmarks -c release DecodeSpeed [--seconds 60] [--repeats 5]
//       [--formats wav,flac,ogg,opus,mp3,aac,alac] [--dir DIR]
import AudioFiles
import Foundation
import StreamFixtures

var seconds = 60
var repeats = 5
var names = AssetFactory.formats.map(\.name)
var directory = (ProcessInfo.processInfo.environment["TMPDIR"] ?? "/tmp") + "/soundstage-decodespeed"
var arguments = CommandLine.arguments.dropFirst().makeIterator()
while let argument = arguments.next() {
    switch argument {
    case "--seconds": seconds = max(1, Int(arguments.next() ?? "") ?? seconds)
    case "--repeats": repeats = max(1, Int(arguments.next() ?? "") ?? repeats)
    case "--formats": names = (arguments.next() ?? "").split(separator: ",").map(String.init)
    case "--dir": directory = arguments.next() ?? directory
    default:
        print("usage: DecodeSpeed [--seconds S] [--repeats R] [--formats wav,flac,…] [--dir DIR]")
        exit(2)
    }
}

/// Thread CPU seconds taken by `body`.
func cpuSeconds(_ body: () throws -> Void) rethrows -> Double {
    let start = ProcessStats.threadCPUSeconds()
    try body()
    return ProcessStats.threadCPUSeconds() - start
}

let rate = AssetFactory.sampleRate
print(
    "DecodeSpeed: \(seconds) s of stereo \(Int(rate)) Hz per format, \(repeats) repeats, one thread, "
        + "files in the page cache (decoding only). CPU = CLOCK_THREAD_CPUTIME_ID; median over the repeats.")
print("× real time = seconds of audio decoded per CPU second.")
print("")
print(
    "format | kbit/s | load: M frames/s | load: × real time | stream: M frames/s | stream: × real time | open stream: heap KiB"
)
print("--- | ---: | ---: | ---: | ---: | ---: | ---:")
for name in names {
    guard AssetFactory.format(named: name) != nil else {
        print("\(name) | unknown format")
        continue
    }
    let path = try AssetFactory.asset(in: directory, prefix: "decode", seed: 1, seconds: seconds, format: name).path
    let frames = Double(try AudioFileReader.info(path: path).frameCount)
    var loads: [Double] = []
    var streams: [Double] = []
    for _ in 0..<repeats {
        loads.append(try cpuSeconds { _ = try AudioFileReader.load(path: path) })
        streams.append(
            try cpuSeconds {
                let reader = try AudioFileStreamReader(path: path)
                var buffer = [Float](repeating: 0, count: 4_096 * reader.channelCount)
                var total = 0
                while true {
                    let got = try buffer.withUnsafeMutableBufferPointer {
                        try reader.read(into: $0.baseAddress!, frames: 4_096)
                    }
                    if got == 0 { break }
                    total += got
                }
                precondition(Double(total) == frames, "\(name): streamed \(total) of \(Int(frames)) frames")
            })
    }
    // Heap held by one open stream after its first 4,096 frames (glibc's in-use count).
    let heapBefore = ProcessStats.heapInUseBytes()
    let open = try AudioFileStreamReader(path: path)
    var chunk = [Float](repeating: 0, count: 4_096 * open.channelCount)
    _ = try chunk.withUnsafeMutableBufferPointer { try open.read(into: $0.baseAddress!, frames: 4_096) }
    let heapBytes = ProcessStats.heapInUseBytes() - heapBefore
    withExtendedLifetime(open) {}
    let kbps = Double(AssetFactory.size(of: path)) * 8 / (frames / rate) / 1000
    let load = ProcessStats.median(loads)
    let stream = ProcessStats.median(streams)
    print(
        "\(name) | \(ProcessStats.fixed(kbps, 0)) | \(ProcessStats.fixed(frames / load / 1e6, 1)) | "
            + "\(ProcessStats.fixed(frames / rate / load, 0)) | \(ProcessStats.fixed(frames / stream / 1e6, 1)) | "
            + "\(ProcessStats.fixed(frames / rate / stream, 0)) | \(ProcessStats.fixed(Double(heapBytes) / 1024, 0))")
}
