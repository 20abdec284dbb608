// Control side. The typed names of the parameters the engine itself reads and writes, and the table
// that resolves them (and the names patches and OSC use) to positions, once per node kind.

/// A parameter the engine refers to in its own code. The parameter tables (`NodeKind.parameters`) are
/// declared with these keys, so the key, its name and its place in every table come from one
/// declaration, and a misspelt key does not compile. Parameters only users name (an effect kernel's,
/// an EQ band's) have no key; they are found by name at the edge and carry their kernel index.
public enum ParameterKey: UInt8, CaseIterable, Sendable, BitwiseCopyable {
    // Mixing (AVAudioMixing) and mixers.
    case volume, pan, outputVolume, channels
    // 3D source (AVAudio3DMixing).
    case positionX, positionY, positionZ, velocityX, velocityY, velocityZ, directionX, directionY, directionZ
    case coneInnerAngle, coneOuterAngle, coneOuterGain, reverbBlend, obstruction, occlusion
    case renderingAlgorithm, sourceMode
    // Players.
    case buffer, file, start, frames, loop, playing
    case numberOfLoops, currentTime, duration, rate, enableRate, meteringEnabled
    // Environment.
    case layout, speakers, listenerX, listenerY, listenerZ, listenerYaw, listenerPitch, listenerRoll
    case distanceModel, referenceDistance, maximumDistance, rolloffFactor, speedOfSound, dopplerFactor
    case headphones, hrtf, reverb, reverbPreset, reverbLevel
    case reverbFilterType, reverbFilterFrequency, reverbFilterBandwidth, reverbFilterGain, reverbFilterBypass
    // Effects.
    case bypass, insert, bands, latency
    // Voice processing.
    case mode, agc, noiseSuppression, inputMuted, duckOthers, duckLevel, advancedDucking
    case micChannels, referenceChannels, reference, ports, voiceProcessing
    // The audio session.
    case resumeAfterInterruption, secondary

    /// The name patches and OSC use: the case's own name.
    public var name: String { Self.names[Int(rawValue)] }

    /// The key named `name`, if the engine has one (a lookup in a table built once).
    public init?(name: String) {
        guard let key = Self.byName[name] else { return nil }
        self = key
    }

    private static let names: [String] = allCases.map { "\($0)" }
    private static let byName: [String: ParameterKey] = Dictionary(uniqueKeysWithValues: allCases.map { ("\($0)", $0) })
}

/// The parameters of one node kind (an EQ's for one band count), with the lookups derived from them:
/// name → position (for the edges: patches, OSC) and key → position (for the engine). Built once per
/// kind and shared by every node of it; a node's values are an array in this table's order.
public final class ParameterTable: Sendable {
    /// The parameters in display order; a node's `values` are in this order.
    public let specs: [ParameterSpec]
    private let positionByName: [String: Int]
    /// Position of each `ParameterKey` (by raw value), −1 where this kind has none.
    private let positionByKey: [Int16]

    init(_ specs: [ParameterSpec]) {
        var byName: [String: Int] = [:]
        var byKey = [Int16](repeating: -1, count: ParameterKey.allCases.count)
        for (position, spec) in specs.enumerated() {
            precondition(
                byName.updateValue(position, forKey: spec.name) == nil, "parameter '\(spec.name)' declared twice")
            if let key = spec.key { byKey[Int(key.rawValue)] = Int16(position) }
        }
        self.specs = specs
        positionByName = byName
        positionByKey = byKey
    }

    /// The position of the parameter named `name`, or nil.
    public func position(of name: String) -> Int? { positionByName[name] }

    /// The position of `key`, or nil when this kind has no such parameter.
    @inline(__always)
    public func position(_ key: ParameterKey) -> Int? {
        let position = positionByKey[Int(key.rawValue)]
        return position < 0 ? nil : Int(position)
    }

    /// The position of `key`, which this kind must have (a programming error otherwise: it traps).
    @inline(__always)
    func requiredPosition(_ key: ParameterKey) -> Int {
        let position = positionByKey[Int(key.rawValue)]
        precondition(position >= 0, "no parameter '\(key.name)' in this table")
        return Int(position)
    }

    /// The spec named `name`, or nil.
    public func spec(named name: String) -> ParameterSpec? { position(of: name).map { specs[$0] } }

    /// Every parameter's default, in table order.
    var defaultValues: [ParameterValue] { specs.map(\.defaultValue) }
}
