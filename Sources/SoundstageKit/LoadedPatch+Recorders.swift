// Control side. The `recorders:` of a patch, made into running `Recorder`s by the embedding layer.
import AudioFiles
import AudioGraph
import Patches

extension LoadedPatch {
    /// Creates the patch's recorders (paths relative to the patch's folder) and starts those marked
    /// `record` (for their `duration`, if any). Returns the recorders, and a message for each one that
    /// could not be made or started; the others run regardless. Call after the host has started.
    /// `waitsForWriters` (offline renders) makes each recorder wait for its disk thread instead of
    /// dropping blocks (`RecorderSettings.waitsForWriter`).
    public func startRecorders(
        waitsForWriters: Bool = false, eventHandler: (@Sendable (String, RecorderEvent) -> Void)? = nil
    ) -> (recorders: [String: Recorder], problems: [String]) {
        var recorders: [String: Recorder] = [:]
        var problems: [String] = []
        for spec in document.recorders {
            var settings = RecorderSettings(waitsForWriter: waitsForWriters)
            if let format = spec.format {
                settings.format = AudioFileFormat(name: format)
            }
            if let encoding = spec.encoding { settings.encoding = AudioSampleEncoding(rawValue: encoding) }
            do {
                let recorder = try Recorder(
                    engine: engine, node: spec.node, path: document.resolvedPath(forFile: spec.path),
                    settings: settings)
                if let eventHandler {
                    let name = spec.name
                    recorder.setEventHandler { eventHandler(name, $0) }
                }
                if spec.record {
                    if let duration = spec.duration {
                        try recorder.record(forDuration: duration)
                    } else {
                        try recorder.record()
                    }
                }
                recorders[spec.name] = recorder
            } catch {
                problems.append("recorder '\(spec.name)': \(error)")
            }
        }
        return (recorders, problems)
    }
}
