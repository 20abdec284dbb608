// Render side: pure helpers (no allocation, no locks).

/// Four floats at a time for the voice processor's per-bin and per-butterfly loops. Each lane does the
/// scalar arithmetic, operation for operation, so that a loop written with lanes gives the same bits as
/// one written bin by bin; sums over bins are taken lane after lane for the same reason.
@usableFromInline
enum VoiceLanes {
    @usableFromInline typealias Lanes = SIMD4<Float>

    @inline(__always) @usableFromInline
    static func load(_ p: UnsafePointer<Float>) -> Lanes {
        UnsafeRawPointer(p).loadUnaligned(as: Lanes.self)
    }

    @inline(__always) @usableFromInline
    static func load(_ p: UnsafeMutablePointer<Float>) -> Lanes {
        UnsafeRawPointer(p).loadUnaligned(as: Lanes.self)
    }

    @inline(__always) @usableFromInline
    static func store(_ v: Lanes, _ p: UnsafeMutablePointer<Float>) {
        UnsafeMutableRawPointer(p).storeBytes(of: v, as: Lanes.self)
    }

    /// The first `count` (1…4) values at `p`, zeros in the other lanes.
    @inline(__always) @usableFromInline
    static func load(_ p: UnsafePointer<Float>, count: Int) -> Lanes {
        if count == 4 { return load(p) }
        var v = Lanes(repeating: 0)
        for i in 0..<count { v[i] = p[i] }
        return v
    }

    @inline(__always) @usableFromInline
    static func load(_ p: UnsafeMutablePointer<Float>, count: Int) -> Lanes {
        load(UnsafePointer(p), count: count)
    }

    /// The first `count` (1…4) lanes of `v` to `p`.
    @inline(__always) @usableFromInline
    static func store(_ v: Lanes, _ p: UnsafeMutablePointer<Float>, count: Int) {
        if count == 4 {
            store(v, p)
            return
        }
        for i in 0..<count { p[i] = v[i] }
    }

    @inline(__always) @usableFromInline
    static func reversed(_ v: Lanes) -> Lanes { Lanes(v[3], v[2], v[1], v[0]) }

    /// −v lane by lane, signed zeros included (the SIMD types' prefix minus is 0 − v, which gives +0 for +0).
    @inline(__always) @usableFromInline
    static func negated(_ v: Lanes) -> Lanes { v * Lanes(repeating: -1) }

    /// `max(x, y)` lane by lane, as the standard library's `max` chooses (`y >= x ? y : x`).
    @inline(__always) @usableFromInline
    static func max(_ x: Lanes, _ y: Lanes) -> Lanes { x.replacing(with: y, where: y .>= x) }

    /// `sum` plus the first `count` lanes of `v`, added in lane order.
    @inline(__always) @usableFromInline
    static func add(_ v: Lanes, to sum: inout Float, count: Int) {
        sum += v[0]
        if count > 1 { sum += v[1] }
        if count > 2 { sum += v[2] }
        if count > 3 { sum += v[3] }
    }
}

/// How many lanes a loop step covers, as a type, so that a step's code is specialised for it.
@usableFromInline
protocol VoiceLaneCount { static var count: Int { get } }

/// All four lanes: the body of a loop over bins.
@usableFromInline
enum VoiceAllLanes: VoiceLaneCount {
    @usableFromInline static var count: Int { 4 }
}

/// The first lane only: the last bin of a spectrum of 4m + 1 bins.
@usableFromInline
enum VoiceFirstLane: VoiceLaneCount {
    @usableFromInline static var count: Int { 1 }
}
