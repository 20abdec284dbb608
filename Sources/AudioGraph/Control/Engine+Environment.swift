// Control side, the API. The 3D environment: vectors, source moves and the listener's orientation.
// Each method takes the engine's lock and hands the work to `EngineCore` (EngineCore+Environment.swift).
import AudioDSP

extension Engine {
    /// Sets three parameters `<name>X/Y/Z` (a source's `position`, `velocity` or `direction`; an
    /// environment's `listener` position) together, as one move.
    public func setVector(
        _ node: String, _ name: String, _ x: Double, _ y: Double, _ z: Double,
        atSampleTime time: Int64? = nil
    ) throws(EngineError) {
        try control.withLock { core throws(EngineError) in try core.setVector(node, name, x, y, z, atSampleTime: time) }
    }

    /// A node's stable number: what `moveSources` addresses nodes by. It stays the node's until the
    /// node is detached (a new node of the same name gets a new number).
    public func nodeID(_ name: String) throws(EngineError) -> Int32 {
        try control.withLock { core throws(EngineError) in try core.nodeID(name) }
    }

    /// Moves many 3D sources at once, addressed by `nodeID`: one lock, no name lookups, and every voice
    /// update reaches the render thread in the same cycle (at `atSampleTime` when given). All or
    /// nothing: an unknown node, a node that is not a 3D source or a coordinate out of range (or not
    /// finite) throws before anything moves.
    public func moveSources(_ moves: UnsafeBufferPointer<SourceMove>, atSampleTime time: Int64? = nil)
        throws(EngineError)
    {
        try control.withLock { core throws(EngineError) in try core.moveSources(moves, atSampleTime: time) }
    }

    /// `moveSources` for an array.
    public func moveSources(_ moves: [SourceMove], atSampleTime time: Int64? = nil) throws(EngineError) {
        try control.withLock { core throws(EngineError) in try core.moveSources(moves, atSampleTime: time) }
    }

    /// Points an environment's listener along `forward` with `up` (OpenAL's AL_ORIENTATION); kept in
    /// sync with `listenerYaw`/`Pitch`/`Roll`.
    public func setListenerOrientation(
        _ node: String, forward: (Double, Double, Double), up: (Double, Double, Double),
        atSampleTime time: Int64? = nil
    ) throws(EngineError) {
        try control.withLock { core throws(EngineError) in
            try core.setListenerOrientation(node, forward: forward, up: up, atSampleTime: time)
        }
    }

    /// Sets an environment's listener yaw, pitch and roll (degrees) together.
    public func setListenerAngles(
        _ node: String, yaw: Double, pitch: Double, roll: Double,
        atSampleTime time: Int64? = nil
    ) throws(EngineError) {
        try control.withLock { core throws(EngineError) in
            try core.setListenerAngles(node, yaw: yaw, pitch: pitch, roll: roll, atSampleTime: time)
        }
    }
}
