// Control side. An HRTF dataset read from a SOFA (AES69) file with libmysofa, resampled to the engine
// rate, onset-aligned and trimmed, with libmysofa's nearest-neighbour lookup and interpolation feeding
// preallocated HRIR slots. Allocates and does file I/O: never call it from the render thread.
import AudioDSP
import CMySofa

#if canImport(Glibc)
    import Glibc
#endif

/// A head-related impulse response set ready for `HRTFConvolver`.
///
/// Loading (`init`): `mysofa_load` and `mysofa_check` (SimpleFreeFieldHRIR, two receivers); the IRs are
/// resampled to `sampleRate` with soxr when the file's rate differs (a rate mismatch is never refused);
/// then each IR's leading delay is split off (the samples before the first `discardedEnergyFraction`
/// of its energy) and stored, with the file's own Data.Delay, as that filter's delay in frames; all IRs
/// are cut to the longest remaining span (the tail after the last `discardedEnergyFraction`
/// of energy goes), or to `Options.maximumFilterLength`. With `Options.minimumPhase` each IR is
/// instead replaced by a short minimum-phase filter with the same smoothed magnitude, its band levels
/// fitted to the measurement's, and the pair's
/// delays (fractional frames) are set so that its interaural cross-correlation lags, broadband and below
/// 1.5 kHz, are the measurement's (`SPATIAL.md`, "How the delays are extracted"; what the engine uses:
/// `Options(quality:)`). What is left replaces libmysofa's Data.IR / Data.Delay, so `mysofa_interpolate`
/// blends onset-aligned filters and delays separately. Finally the positions are made Cartesian and
/// libmysofa builds its k-d tree (`mysofa_lookup_init`) and neighbour table (`mysofa_neighborhood_init`).
///
/// Left/right symmetry: when every measurement has a mirror image (azimuth −φ, same elevation and
/// radius) whose right ear equals its left ear (within 1e-6 of the set's peak), `isMirrorSymmetric` is
/// true and lookups for sources on the left use the mirrored right-side direction with the ears
/// swapped; sources exactly on the median plane get the average of both ears. Mirrored sources then
/// render exactly mirrored. The MIT KEMAR set Debian ships is symmetric (its right ear was made from the
/// left ear's measurements).
///
/// Not thread-safe: one control thread at a time (lookups share a scratch buffer).
public final class SOFADataset: HRIRSet {
    /// How loading trims and aligns the IRs.
    public struct Options: Sendable, Equatable {
        /// Fraction of each IR's energy that may be dropped before its onset and after its tail
        /// (1e-5, −50 dB, by default). 0 keeps every sample and only moves the delay.
        public var discardedEnergyFraction: Double
        /// Longest filter kept, in taps at the engine rate (nil: the whole trimmed span). A cut filter's
        /// last quarter is faded out with a half raised cosine.
        public var maximumFilterLength: Int?
        /// Replace each filter by the minimum-phase filter with its smoothed magnitude (1/6 octave, or
        /// 1/12 for filters of 2.1 ms or more), cut to `maximumFilterLength` taps (128 if nil; the last 7
        /// left zero) and fitted to the measurement's band levels, with fractional delays that keep the
        /// measured pair's interaural delay (`MinimumPhaseDesigner`, `BandLevelFitter`,
        /// `HRIRDelayEstimator`). Short filters lose much less this way than by cutting.
        public var minimumPhase: Bool

        public init(discardedEnergyFraction: Double = 1e-5, maximumFilterLength: Int? = nil, minimumPhase: Bool = false)
        {
            self.discardedEnergyFraction = discardedEnergyFraction
            self.maximumFilterLength = maximumFilterLength
            self.minimumPhase = minimumPhase
        }

        /// What an engine renders `quality` with at `sampleRate`: minimum-phase filters of
        /// `quality.filterLength(sampleRate:)` taps (64 for HRTF, 128 for HRTF HQ at 48 kHz).
        public init(quality: HRTFQuality, sampleRate: Double) {
            self.init(maximumFilterLength: quality.filterLength(sampleRate: sampleRate), minimumPhase: true)
        }
    }

    /// The file loaded.
    public let path: String
    /// The engine rate the set was resampled to, Hz.
    public let sampleRate: Double
    /// The rate stored in the file, Hz.
    public let sourceSampleRate: Double
    /// Number of measured directions (M).
    public let measurementCount: Int
    /// IR length in the file (N).
    public let sourceFilterLength: Int
    /// IR length after resampling, before trimming: round(N × sampleRate / sourceSampleRate).
    public let resampledFilterLength: Int
    /// IR length after onset alignment and trimming (the `HRTFConvolver` filter length).
    public let filterLength: Int
    /// Largest per-ear delay in the set, frames at `sampleRate`.
    public let maximumDelayFrames: Double
    /// Whether lookups are folded onto the right hemisphere (see the type's description).
    public let isMirrorSymmetric: Bool
    /// Measurement radius (the largest, for sets with several), metres.
    public let radius: Double
    /// The file's global attributes (DatabaseName, ListenerShortName, SOFAConventions, …).
    public let attributes: [String: String]

    let hrtf: UnsafeMutablePointer<MYSOFA_HRTF>
    let lookup: UnsafeMutablePointer<MYSOFA_LOOKUP>
    let neighborhood: UnsafeMutablePointer<MYSOFA_NEIGHBORHOOD>
    /// The exact search from a previous answer that spares most moves the tree (nil for huge sets).
    let search: NearestMeasurementSearch?
    /// 2 × `filterLength` floats for `mysofa_interpolate`, and the two ears for averaging.
    let scratch: UnsafeMutablePointer<Float>
    let ears: UnsafeMutablePointer<Float>

    /// Debian's MIT KEMAR (normal pinna) set.
    public static let debianKEMARPath = "/usr/share/libmysofa/MIT_KEMAR_normal_pinna.sofa"
    /// Debian's default set (a link to the KEMAR set).
    public static let debianDefaultPath = "/usr/share/libmysofa/default.sofa"

    /// Loads `path` for an engine running at `sampleRate` Hz. Throws `SOFALoadError` when the file is
    /// missing or not a two-ear SimpleFreeFieldHRIR set, or resampling fails.
    public init(path: String, sampleRate: Double, options: Options = Options()) throws(SOFALoadError) {
        guard sampleRate.isFinite, sampleRate >= 8000 else {
            throw SOFALoadError(path: path, reason: "engine sample rate \(sampleRate) Hz is below 8 kHz")
        }
        var error: Int32 = 0
        guard let loaded = mysofa_load(path, &error) else {
            throw SOFALoadError(path: path, reason: SOFALoadError.describe(mysofaError: error))
        }
        var owned: UnsafeMutablePointer<MYSOFA_HRTF>? = loaded
        defer { if let owned { mysofa_free(owned) } }
        error = mysofa_check(loaded)
        guard error == 0 else { throw SOFALoadError(path: path, reason: SOFALoadError.describe(mysofaError: error)) }
        let h = loaded.pointee
        guard h.R == 2 else { throw SOFALoadError(path: path, reason: "\(h.R) receivers; an HRTF set has 2") }
        guard h.DataSamplingRate.elements == 1, let rates = h.DataSamplingRate.values, rates[0] > 0 else {
            throw SOFALoadError(path: path, reason: "no single Data.SamplingRate")
        }
        self.path = path
        self.sampleRate = sampleRate
        sourceSampleRate = Double(rates[0])
        measurementCount = Int(h.M)
        sourceFilterLength = Int(h.N)
        attributes = Self.readAttributes(h.attributes)

        mysofa_tospherical(loaded)
        let prepared = try Self.prepare(loaded, path: path, sampleRate: sampleRate, options: options)
        resampledFilterLength = prepared.resampledLength
        filterLength = prepared.filterLength
        maximumDelayFrames = prepared.maximumDelay
        isMirrorSymmetric = Self.isMirrorSymmetric(loaded)

        mysofa_tocartesian(loaded)
        guard let lookup = mysofa_lookup_init(loaded) else {
            throw SOFALoadError(path: path, reason: "libmysofa could not build its lookup tree")
        }
        guard let neighborhood = mysofa_neighborhood_init(loaded, lookup) else {
            mysofa_lookup_free(lookup)
            throw SOFALoadError(path: path, reason: "libmysofa could not build its neighbour table")
        }
        radius = Double(lookup.pointee.radius_max)
        search = loaded.pointee.SourcePosition.values.flatMap {
            NearestMeasurementSearch(positions: UnsafePointer($0), count: Int(loaded.pointee.M))
        }
        self.lookup = lookup
        self.neighborhood = neighborhood
        hrtf = loaded
        owned = nil
        scratch = .allocate(capacity: 2 * filterLength)
        scratch.initialize(repeating: 0, count: 2 * filterLength)
        ears = .allocate(capacity: 2 * filterLength)
        ears.initialize(repeating: 0, count: 2 * filterLength)
    }

    deinit {
        mysofa_neighborhood_free(neighborhood)
        mysofa_lookup_free(lookup)
        mysofa_free(hrtf)
        scratch.deallocate()
        ears.deallocate()
    }

    /// A convolver sized for this set (filter length, delays) with the crossfade of `quality`.
    public func makeConvolver(maxBlockFrames: Int, quality: HRTFQuality) -> HRTFConvolver {
        HRTFConvolver(
            sampleRate: sampleRate, maxBlockFrames: maxBlockFrames, filterLength: filterLength,
            maximumDelayFrames: maximumDelayFrames + 4, crossfadeFrames: quality.crossfadeFrames(sampleRate: sampleRate)
        )
    }

    /// Writes the HRIR pair for `direction` into `slot`: the nearest measurement, or with `interpolated`
    /// the inverse-distance blend of it and its nearest neighbours in azimuth, elevation and radius
    /// (`mysofa_interpolate`). Distance is ignored for single-radius sets. Control side; allocates nothing.
    public func fill(_ slot: HRIRSlot, direction: SourceDirection, interpolated: Bool) {
        guard interpolated else {
            fill(slot, nearestKey: nearestKey(for: direction))
            return
        }
        precondition(slot.capacity >= filterLength, "slot too short for this set")
        let (local, swapEars) = folded(direction)
        let (left, right, leftDelay, rightDelay) = response(local: local, interpolated: true)
        write(
            slot, left: left, right: right, leftDelay: leftDelay, rightDelay: rightDelay,
            mode: isMirrorSymmetric && local.x == 0 ? 2 : swapEars ? 1 : 0)
    }

    /// The nearest-measurement choice for `direction` as a number: the measurement's index × 3, plus 1
    /// when a mirrored measurement is used with the ears swapped, or 2 on the median plane of a symmetric
    /// set (ears averaged). Equal keys fill equal slots, so a caller can skip an update that would publish
    /// the same pair again. Control side; allocates nothing.
    ///
    /// `hint` is a key returned before (−1: none). A source that moved a little is settled from it with a
    /// few distances (`NearestMeasurementSearch`, exact); otherwise libmysofa's k-d tree answers.
    public func nearestKey(for direction: SourceDirection, hint: Int = -1) -> Int {
        let (local, swapEars) = folded(direction)
        let nearest: Int
        let r = radius > 0 ? radius : 1
        if hint >= 0, let search,
            let found = search.nearest(Float(-local.z * r), Float(-local.x * r), Float(local.y * r), hint: hint / 3)
        {
            nearest = found
        } else {
            nearest = withCoordinate(local) { Int(mysofa_lookup(lookup, $0)) }
        }
        guard nearest >= 0 else { return -1 }
        return nearest * 3 + (isMirrorSymmetric && local.x == 0 ? 2 : swapEars ? 1 : 0)
    }

    /// Writes the pair `key` (from `nearestKey(for:)`) into `slot`. Control side; allocates nothing.
    public func fill(_ slot: HRIRSlot, nearestKey key: Int) {
        precondition(slot.capacity >= filterLength, "slot too short for this set")
        let k = filterLength
        guard key >= 0, key / 3 < measurementCount else {
            // No answer from the tree (cannot happen for a checked set); silence rather than a crash.
            scratch.update(repeating: 0, count: 2 * k)
            slot.setFilters(left: scratch, right: scratch + k, count: k, leftDelay: 0, rightDelay: 0)
            return
        }
        let index = key / 3
        let taps = UnsafePointer(hrtf.pointee.DataIR.values + index * 2 * k)
        let delays = hrtf.pointee.DataDelay.values!
        write(
            slot, left: taps, right: taps + k, leftDelay: Double(delays[2 * index]),
            rightDelay: Double(delays[2 * index + 1]), mode: key % 3)
    }

    /// The direction in listener-local coordinates, folded onto the right hemisphere for symmetric sets
    /// (then `swapEars` is true for sources on the left).
    private func folded(_ direction: SourceDirection) -> (local: SpatialVector, swapEars: Bool) {
        var local = direction.local
        if isMirrorSymmetric && local.x < 0 {
            local.x = -local.x
            return (local, true)
        }
        return (local, false)
    }

    /// Writes a pair as looked up (`mode` 0), with the ears swapped (1) or averaged (2).
    private func write(
        _ slot: HRIRSlot, left: UnsafePointer<Float>, right: UnsafePointer<Float>, leftDelay: Double,
        rightDelay: Double, mode: Int
    ) {
        let k = filterLength
        switch mode {
        case 2:
            // On the median plane of a symmetric set both ears are equal; the neighbour choice may not be.
            for n in 0..<k { ears[n] = 0.5 * (left[n] + right[n]) }
            let d = 0.5 * (leftDelay + rightDelay)
            slot.setFilters(left: ears, right: ears, count: k, leftDelay: d, rightDelay: d)
        case 1:
            slot.setFilters(left: right, right: left, count: k, leftDelay: rightDelay, rightDelay: leftDelay)
        default:
            slot.setFilters(left: left, right: right, count: k, leftDelay: leftDelay, rightDelay: rightDelay)
        }
    }

    /// The index of the measurement nearest to `direction` (no mirror folding).
    public func nearestMeasurement(to direction: SourceDirection) -> Int {
        withCoordinate(direction.local) { Int(mysofa_lookup(lookup, $0)) }
    }

    /// Measurement `index` as stored after preparation: trimmed taps and delays in frames.
    public func measurement(_ index: Int) -> (left: [Float], right: [Float], leftDelay: Double, rightDelay: Double) {
        precondition(index >= 0 && index < measurementCount)
        let base = hrtf.pointee.DataIR.values + index * 2 * filterLength
        let delays = hrtf.pointee.DataDelay.values!
        return (
            Array(UnsafeBufferPointer(start: base, count: filterLength)),
            Array(UnsafeBufferPointer(start: base + filterLength, count: filterLength)),
            Double(delays[2 * index]), Double(delays[2 * index + 1])
        )
    }

    /// Calls `body` with SOFA Cartesian coordinates (x front, y left, z up; three floats) at the set's
    /// radius for a listener-local unit vector (x right, y up, z behind).
    func withCoordinate<R>(_ local: SpatialVector, _ body: (UnsafeMutablePointer<Float>) -> R) -> R {
        let r = radius > 0 ? radius : 1
        return withUnsafeTemporaryAllocation(of: Float.self, capacity: 3) { c in
            c[0] = Float(-local.z * r)
            c[1] = Float(-local.x * r)
            c[2] = Float(local.y * r)
            return body(c.baseAddress!)
        }
    }

    /// Pointers to both ears' taps and their delays for `local`, nearest or interpolated.
    func response(local: SpatialVector, interpolated: Bool)
        -> (UnsafePointer<Float>, UnsafePointer<Float>, Double, Double)
    {
        let k = filterLength
        let found: (Int32, UnsafeMutablePointer<Float>?, Double, Double) = withCoordinate(local) { c in
            let nearest = mysofa_lookup(lookup, c)
            guard interpolated, nearest >= 0 else { return (nearest, nil, 0, 0) }
            return withUnsafeTemporaryAllocation(of: Float.self, capacity: 2) { d in
                d[0] = 0
                d[1] = 0
                let neighbours = mysofa_neighborhood(neighborhood, nearest)
                let taps = mysofa_interpolate(hrtf, c, nearest, neighbours, scratch, d.baseAddress!)
                return (nearest, taps ?? scratch, Double(d[0]), Double(d[1]))
            }
        }
        let nearest = found.0
        if nearest < 0 {
            // No answer from the tree (cannot happen for a checked set); silence rather than a crash.
            scratch.update(repeating: 0, count: 2 * k)
            return (UnsafePointer(scratch), UnsafePointer(scratch + k), 0, 0)
        }
        if let taps = found.1 {
            return (UnsafePointer(taps), UnsafePointer(taps + k), found.2, found.3)
        }
        let taps = UnsafePointer(hrtf.pointee.DataIR.values + Int(nearest) * 2 * k)
        let delays = hrtf.pointee.DataDelay.values!
        return (taps, taps + k, Double(delays[2 * Int(nearest)]), Double(delays[2 * Int(nearest) + 1]))
    }

    static func readAttributes(_ first: UnsafeMutablePointer<MYSOFA_ATTRIBUTE>?) -> [String: String] {
        var result: [String: String] = [:]
        var a = first
        while let node = a {
            if let name = node.pointee.name, let value = node.pointee.value {
                result[String(cString: name)] = String(cString: value)
            }
            a = node.pointee.next
        }
        return result
    }
}
