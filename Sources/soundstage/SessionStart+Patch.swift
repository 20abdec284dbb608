// Control side. A patch's `session:` section as the OSC service's session settings at start.
import OSCControl
import Patches

extension SessionStart {
    init(_ settings: PatchSessionSettings) {
        self.init(
            category: settings.category.flatMap(SessionCategory.init(rawValue:)),
            mode: settings.mode.flatMap(SessionMode.init(rawValue:)),
            options: SessionOptions(
                mixWithOthers: settings.mixWithOthers ?? false, duckOthers: settings.duckOthers ?? false,
                interruptSpokenAudioAndMixWithOthers: settings.interruptSpokenAudioAndMixWithOthers ?? false),
            duckLevel: settings.duckLevel, activates: settings.active ?? false)
    }
}
