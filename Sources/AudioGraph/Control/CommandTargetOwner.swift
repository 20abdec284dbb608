// Control side. Objects that own render state commands can point at, so burying one can purge the
// timed commands still waiting for it (see `Engine.bury`).

/// Owns render-side memory that a `Command` may target or hand over.
protocol CommandTargetOwner: AnyObject {
    /// Every pointer a command may carry into this object's memory (`Command.references`).
    var commandTargets: [UnsafeMutableRawPointer] { get }
}

extension NodeRecord: CommandTargetOwner {
    var commandTargets: [UnsafeMutableRawPointer] {
        var targets = [UnsafeMutableRawPointer(mixing)]
        if let effect { targets.append(effect.raw) }
        if let player { targets.append(UnsafeMutableRawPointer(player)) }
        if let mixer { targets.append(UnsafeMutableRawPointer(mixer)) }
        if let environment { targets.append(UnsafeMutableRawPointer(environment.state)) }
        if let voice { targets.append(UnsafeMutableRawPointer(voice)) }
        return targets
    }
}

extension EdgeFade: CommandTargetOwner {
    var commandTargets: [UnsafeMutableRawPointer] { [UnsafeMutableRawPointer(ramp)] }
}

extension SpatialVoiceRecord: CommandTargetOwner {
    var commandTargets: [UnsafeMutableRawPointer] { [UnsafeMutableRawPointer(voice)] }
}

extension OwnedConvolver: CommandTargetOwner {
    var commandTargets: [UnsafeMutableRawPointer] { [UnsafeMutableRawPointer(pointer)] }
}

extension OwnedBed: CommandTargetOwner {
    var commandTargets: [UnsafeMutableRawPointer] { [UnsafeMutableRawPointer(pointer)] }
}

extension RetiredRateStage: CommandTargetOwner {
    var commandTargets: [UnsafeMutableRawPointer] { [effect.raw] }
}
