// Control side plus one worker. Time-pitch kernels built ahead of need for live engines: setting up a
// Rubber Band stretcher and running it through its extremes (so nothing grows on the render thread)
// takes tens of milliseconds, too long for a control request to wait (docs/DECISIONS.md).
import AudioDSP
import Dispatch
import Locking

/// A kernel for the shapes live engines ask for most, built on a worker and taken by the control side
/// when a time-pitch node (or an audioplayer's rate stage) is made. A taken kernel is the same as one
/// built at that moment: it was built with the same arguments and never ran.
final class TimePitchSpares: Sendable {
    struct Shape: Hashable {
        let sampleRate: Double
        let maxBlockFrames: Int
        let channelCount: Int
    }

    /// A built kernel nothing else references (handed from the worker to the control side).
    private struct Spare: @unchecked Sendable {
        // @unchecked: a Rubber Band kernel nothing else references, handed from the worker to the control side.
        let kernel: UnsafeMutablePointer<TimePitchKernel>
    }

    private struct Shelf {
        var spares: [Shape: [Spare]] = [:]
        /// How many to keep of each shape (shapes not named here are never built ahead).
        var wanted: [Shape: Int] = [:]
        /// Builds queued on the worker and not yet shelved.
        var building: [Shape: Int] = [:]
        /// Kernels taken so far (tests).
        var taken = 0
        var isClosed = false
    }

    private let worker = DispatchQueue(label: "soundstage.timepitch-spares", qos: .utility)
    private let shelf = Locked<Shelf>(Shelf())

    /// Keeps `count` kernels of each of `shapes` ready from now on, and no others: spares of other
    /// shapes (an engine rate that has changed) are freed.
    func keep(_ count: Int, of shapes: Set<Shape>) {
        let unwanted = shelf.withLock { shelf -> [Spare] in
            shelf.wanted = Dictionary(uniqueKeysWithValues: shapes.map { ($0, max(0, count)) })
            let others = shelf.spares.filter { !shapes.contains($0.key) }
            for shape in others.keys { shelf.spares[shape] = nil }
            return others.values.flatMap { $0 }
        }
        for spare in unwanted { Self.free(spare.kernel) }
        for shape in shapes { refill(shape) }
    }

    /// A ready kernel of `shape`, or nil when none is ready (the caller builds one). Another is built in
    /// its place.
    func take(_ shape: Shape) -> UnsafeMutablePointer<TimePitchKernel>? {
        let spare = shelf.withLock { shelf in
            let spare = shelf.spares[shape]?.popLast()
            if spare != nil { shelf.taken += 1 }
            return spare
        }
        if spare != nil { refill(shape) }
        return spare?.kernel
    }

    /// Kernels ready now, by shape (tests).
    func readyCount(_ shape: Shape) -> Int { shelf.withLock { $0.spares[shape]?.count ?? 0 } }

    /// Kernels taken so far (tests).
    var takenCount: Int { shelf.withLock { $0.taken } }

    /// Waits for the builds already queued (tests).
    func waitForBuilds() { worker.sync {} }

    /// Stops building, waits for the worker and frees every spare (the engine is going away).
    func close() {
        shelf.withLock { $0.isClosed = true }
        worker.sync {}
        let all = shelf.withLock { shelf in
            defer { shelf.spares = [:] }; return shelf.spares.values.flatMap { $0 }
        }
        for spare in all { Self.free(spare.kernel) }
    }

    /// Queues builds until the shelf plus the builds under way hold what is wanted.
    private func refill(_ shape: Shape) {
        let missing = shelf.withLock { shelf -> Int in
            guard !shelf.isClosed else { return 0 }
            let have = (shelf.spares[shape]?.count ?? 0) + (shelf.building[shape] ?? 0)
            let missing = max(0, (shelf.wanted[shape] ?? 0) - have)
            shelf.building[shape, default: 0] += missing
            return missing
        }
        for _ in 0..<missing {
            worker.async { [shelf] in
                let kernel = UnsafeMutablePointer<TimePitchKernel>.allocate(capacity: 1)
                kernel.initialize(
                    to: TimePitchKernel(
                        sampleRate: shape.sampleRate, maxBlockFrames: shape.maxBlockFrames,
                        channelCount: shape.channelCount))
                let spare = Spare(kernel: kernel)
                let shelved = shelf.withLock { shelf -> Bool in
                    shelf.building[shape, default: 1] -= 1
                    guard !shelf.isClosed else { return false }
                    shelf.spares[shape, default: []].append(spare)
                    return true
                }
                if !shelved { Self.free(spare.kernel) }
            }
        }
    }

    private static func free(_ kernel: UnsafeMutablePointer<TimePitchKernel>) {
        kernel.pointee.deallocate()
        kernel.deinitialize(count: 1)
        kernel.deallocate()
    }
}

extension Engine {
    /// Live hosts (`soundstage run`) call this so that making a time-pitch node, or an audioplayer whose
    /// rate can change, takes a kernel built ahead on a worker instead of building one while the request
    /// waits: `count` kernels are kept ready for each of `channelCounts` at the engine's rate and block
    /// size. Other shapes are built when asked for, as before. Offline renders need none of this.
    /// Call it again after the engine's sample rate changed: spares of the old rate are freed.
    public func keepTimePitchSpares(_ count: Int = 2, channelCounts: [Int] = [1, 2]) {
        let config = configuration
        let shapes = channelCounts.filter { (1...8).contains($0) }.map {
            TimePitchSpares.Shape(sampleRate: config.sampleRate, maxBlockFrames: config.blockFrames, channelCount: $0)
        }
        services.timePitchSpares.keep(count, of: Set(shapes))
    }
}
