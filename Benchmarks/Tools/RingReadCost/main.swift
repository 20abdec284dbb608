// The render side of a streamed player: StreamRing.read (deinterleaving a disk stream's ring into a
// bus), in ns per frame, stereo, 64-frame sub-blocks, with the writer keeping the ring full.
//
//   swift run --package-path Benchmarks -c release RingReadCost
import AudioDSP
import Foundation

let channels = 2
let block = 64
let ring = StreamRing(channelCount: channels, capacityFrames: 65_536)
let source = UnsafeMutablePointer<Float>.allocate(capacity: 4_096 * channels)
for i in 0..<(4_096 * channels) { source[i] = Float(i % 997) / 997 }
let busData = UnsafeMutablePointer<Float>.allocate(capacity: channels * block)
let bus = BusRef(data: busData, channelCount: channels, stride: block)
var sink: Float = 0

@MainActor func run(frames total: Int) -> Double {
    var done = 0
    let start = DispatchTime.now().uptimeNanoseconds
    while done < total {
        if ring.writableFrames >= 4_096 { _ = ring.write(interleaved: source, frames: 4_096) }
        let n = ring.read(into: bus, offset: 0, frames: block)
        sink += busData[0] + busData[block]
        done += n
    }
    return Double(DispatchTime.now().uptimeNanoseconds - start) / Double(total)
}

_ = run(frames: 1_000_000)
var results: [Double] = []
for _ in 0..<7 { results.append(run(frames: 10_000_000)) }
results.sort()
print(
    String(
        format: "StreamRing.read, stereo, %d-frame blocks: median %.2f ns/frame (min %.2f, max %.2f); "
            + "%.4f ms of CPU per second of 48 kHz audio per stream (ring read and refill)", block, results[3],
        results[0],
        results[6], results[3] * 48_000 / 1e6))
if sink == .infinity { print(sink) }
