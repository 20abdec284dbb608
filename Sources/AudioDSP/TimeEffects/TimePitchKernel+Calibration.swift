// Control side. Measures, once at creation, where Rubber Band's output really starts and how far ahead
// of its output the stretcher reads, so the kernel can align its output exactly and report its latency.
import CRubberBand

extension TimePitchKernel {
    /// Control side (allocates). At rate 1 / pitch 0, after the warm-up: resets the stretcher, primes it
    /// with `startPad` frames of silence, then feeds a click followed by silence, each chunk exactly the
    /// stretcher's `samples_required` (so every output hop appears as soon as it can).
    ///
    /// - `alignment`: the click's output frame minus Rubber Band's start delay. Rubber Band 3.1.2 returns
    ///   0 for a new stretcher, but once its pitch resampler has run at other ratios (the warm-up does
    ///   that), `rubberband_reset` no longer brings it back to its initial timing: the output then trails
    ///   the start delay by 127 frames at 48 kHz, the same for every later reset, glide or block size.
    /// - `lookAhead`: over the output hops, the largest (input frames fed when the hop came out) −
    ///   (the hop's first output frame, counted after the start delay and the alignment) − 1. A host that
    ///   pushes and pulls the same frames each cycle can therefore play output frame t at input frame
    ///   t − lookAhead without ever waiting for the stretcher.
    ///
    /// Resets the stretcher afterwards.
    mutating func calibrate() -> (alignment: Int, lookAhead: Int) {
        rubberband_reset(stretcher)
        let delay = Int(rubberband_get_start_delay(stretcher))
        let chunkCapacity = max(maxBlockFrames, 1)
        let input = UnsafeMutablePointer<Float>.allocate(capacity: channelCount * chunkCapacity)
        input.initialize(repeating: 0, count: channelCount * chunkCapacity)
        defer { input.deallocate() }
        for c in 0..<channelCount { inputPointers[c] = UnsafePointer(input + c * chunkCapacity) }
        var padded = 0
        while padded < startPad {
            let n = min(startPad - padded, chunkCapacity)
            rubberband_process(stretcher, inputPointers, UInt32(n), 0)
            padded += n
        }
        var output: [Float] = []
        _ = retrieveAll(appendingTo: &output)
        output.removeAll()
        var hops: [(fed: Int, firstFrame: Int)] = []
        var fed = 0
        let total = delay + 4 * (primingFrames + startPad) + 4096
        while fed < total {
            let n = min(max(Int(rubberband_get_samples_required(stretcher)), 1), chunkCapacity)
            for c in 0..<channelCount { input[c * chunkCapacity] = fed == 0 ? 1 : 0 }
            rubberband_process(stretcher, inputPointers, UInt32(n), 0)
            fed += n
            let before = output.count
            if retrieveAll(appendingTo: &output) > 0 { hops.append((fed, before)) }
        }
        var peak = 0
        for i in output.indices where abs(output[i]) > abs(output[peak]) { peak = i }
        let alignment = max(peak - delay, 0)
        let start = delay + alignment
        var lookAhead = 0
        for (i, hop) in hops.enumerated() {
            let end = i + 1 < hops.count ? hops[i + 1].firstFrame : output.count
            if end <= start { continue }
            lookAhead = max(lookAhead, hop.fed - max(hop.firstFrame - start, 0) - 1)
        }
        rubberband_reset(stretcher)
        scratch.update(repeating: 0, count: channelCount * scratchFrames)
        return (alignment, lookAhead)
    }

    /// Control side. Retrieves everything the stretcher has, appending channel 0 to `output`; returns the
    /// number of frames.
    private func retrieveAll(appendingTo output: inout [Float]) -> Int {
        var total = 0
        var available = Int(rubberband_available(stretcher))
        while available > 0 {
            let n = min(available, scratchFrames)
            for c in 0..<channelCount { outputPointers[c] = scratch + c * scratchFrames }
            let got = Int(rubberband_retrieve(stretcher, outputPointers, UInt32(n)))
            if got <= 0 { break }
            output.append(contentsOf: UnsafeBufferPointer(start: scratch, count: got))
            total += got
            available -= got
        }
        return total
    }
}
