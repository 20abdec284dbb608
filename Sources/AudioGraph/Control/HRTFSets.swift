// Control side. HRTF sets loaded once per engine and shared by its environments; in a live engine they
// load on a worker so no control request waits for one. The sets come from the embedding layer
// (`HRTFSetSource`: SOFA files through SpatialAssets); the graph reads no file itself.
import AudioDSP
import Dispatch
import Locking

/// Why an HRTF set could not be loaded: the file and the loader's reason.
public struct HRTFLoadError: Error, CustomStringConvertible, Equatable, Sendable {
    /// The file.
    public var path: String
    /// What went wrong, in words.
    public var reason: String

    public init(path: String, reason: String) {
        self.path = path
        self.reason = reason
    }

    public var description: String { path.isEmpty ? reason : "\(path): \(reason)" }
}

/// Where an engine's HRTF sets come from, given to `Engine.init` by the embedding layer (SoundstageKit
/// reads SOFA files with SpatialAssets). An engine without one renders HRTF sources with the spherical
/// head and reports why, as it does for a file that fails to load.
public struct HRTFSetSource: Sendable {
    /// The file an environment uses when its `hrtf` parameter is empty.
    public var defaultPath: String
    /// Loads the set in `path` prepared for `quality` at `sampleRate` Hz. Called on the engine's loading
    /// worker in a live engine, otherwise on the thread of the request that first needs the set (under
    /// the engine lock). The set is used only under the engine lock afterwards.
    public var load:
        @Sendable (_ path: String, _ quality: HRTFQuality, _ sampleRate: Double) throws(HRTFLoadError)
            -> any HRIRSet

    public init(
        defaultPath: String,
        load:
            @escaping @Sendable (_ path: String, _ quality: HRTFQuality, _ sampleRate: Double)
            throws(HRTFLoadError) -> any HRIRSet
    ) {
        self.defaultPath = defaultPath
        self.load = load
    }
}

/// Which set: the file and the quality it was prepared for (filter lengths differ).
struct HRTFSetKey: Hashable {
    let path: String
    let quality: HRTFQuality
}

/// An environment's `hrtf` set in a live engine: the value applies when the set for `key` is loaded.
struct PendingHRTFChange {
    let key: HRTFSetKey
    let value: ParameterValue
}

/// A set being handed from the loading worker to the control side. A set is not `Sendable` (it keeps
/// scratch buffers); the worker drops its reference when it hands the set over, and from then on it is
/// used only under the engine lock.
final class LoadedHRTFSet: @unchecked Sendable {
    // @unchecked: handed from the loading worker to the control side, which owns it from then on.
    let key: HRTFSetKey
    /// The rate the set was prepared for.
    let sampleRate: Double
    let result: Result<any HRIRSet, HRTFLoadError>

    init(key: HRTFSetKey, sampleRate: Double, result: Result<any HRIRSet, HRTFLoadError>) {
        self.key = key
        self.sampleRate = sampleRate
        self.result = result
    }
}

/// Loads on a worker and queues what finished for `Engine.poll()`.
final class HRTFLoadWorker: Sendable {
    private let worker = DispatchQueue(label: "soundstage.hrtf-loader")
    private let finished = Locked<[LoadedHRTFSet]>([])

    func load(_ key: HRTFSetKey, sampleRate: Double, from source: HRTFSetSource) {
        let finished = self.finished
        worker.async {
            let result: Result<any HRIRSet, HRTFLoadError>
            do throws(HRTFLoadError) {
                result = .success(try source.load(key.path, key.quality, sampleRate))
            } catch {
                result = .failure(error)
            }
            let loaded = LoadedHRTFSet(key: key, sampleRate: sampleRate, result: result)
            finished.withLock { $0.append(loaded) }
        }
    }

    /// Loads finished since the last call.
    func takeFinished() -> [LoadedHRTFSet] {
        finished.withLock { list in
            defer { list = [] }; return list
        }
    }

    /// Waits for every load already started (tests; the engine's deinit).
    func waitForLoads() { worker.sync {} }

    /// Tests: loads started from now on wait until the returned semaphore is signalled.
    func holdLoads() -> DispatchSemaphore {
        let gate = DispatchSemaphore(value: 0)
        worker.async { gate.wait() }
        return gate
    }
}

extension Engine {
    /// Live hosts (`soundstage run`) set this so an HRTF set loads on a worker: a source keeps the
    /// spherical-head model until its set is ready, and no control request waits for the file. Off (the
    /// default, and what offline renders use), a set loads on first use, so a render is the same
    /// whenever it runs.
    public func setLoadsHRTFSetsInBackground(_ enabled: Bool) {
        control.withLock { $0.state.spatial.loadsHRTFSetsInBackground = enabled }
    }

    /// Waits until HRTF sets being loaded in the background are ready, then hands them to their
    /// environments (a `poll()` follows). A set that was loading for the rate the engine ran at before
    /// a rate change is loaded again at the new one, and waited for too.
    public func waitForHRTFSets() {
        repeat {
            services.hrtfLoader.waitForLoads()
            poll()
        } while control.withLock { !$0.state.spatial.hrtfLoading.isEmpty }
    }
}

extension EngineCore {
    /// The file an environment with an empty `hrtf` uses ("" without a set source).
    var defaultHRTFPath: String { hrtfSetSource?.defaultPath ?? "" }

    /// The set for `key` if it is loaded. Otherwise loads it now, or (in the background mode) starts
    /// loading it for `environment` and returns nil. Throws when a load here fails.
    func hrtfSet(_ key: HRTFSetKey, for environment: NodeRecord, now: Bool) throws(HRTFLoadError) -> (any HRIRSet)? {
        if let set = state.spatial.hrtfSets[key] { return set }
        if let failure = state.spatial.hrtfFailures[key] { throw failure }
        guard let source = hrtfSetSource else {
            throw HRTFLoadError(path: key.path, reason: "this engine was made without an HRTF set source")
        }
        if state.spatial.loadsHRTFSetsInBackground && !now {
            state.spatial.hrtfWaiting[key, default: []].insert(environment.id)
            if state.spatial.hrtfLoading.insert(key).inserted {
                hrtfLoader.load(key, sampleRate: state.configuration.sampleRate, from: source)
            }
            return nil
        }
        // A failure here is not remembered: the caller reports it, and a later request tries again.
        let set = try source.load(key.path, key.quality, state.configuration.sampleRate)
        state.spatial.hrtfSets[key] = set
        return set
    }

    /// Poll. Files the sets loaded in the background and re-places the voices of the
    /// environments that waited for them (they switch from the spherical head to HRTF with the usual
    /// crossfade); a set that failed is reported to each of them. Environments whose `hrtf` was set to
    /// the file switch to the new set now, or on failure keep theirs and report it. A set prepared for
    /// another rate than the engine's (the rate changed while it loaded) is loaded again at the engine's,
    /// and whoever waited for it waits on.
    func adoptLoadedHRTFSets() {
        for loaded in hrtfLoader.takeFinished() {
            if loaded.sampleRate != state.configuration.sampleRate, let source = hrtfSetSource {
                hrtfLoader.load(loaded.key, sampleRate: state.configuration.sampleRate, from: source)
                continue
            }
            state.spatial.hrtfLoading.remove(loaded.key)
            let waiting = state.spatial.hrtfWaiting.removeValue(forKey: loaded.key) ?? []
            defer { adoptHRTFChanges(loaded) }
            switch loaded.result {
            case .success(let set):
                state.spatial.hrtfSets[loaded.key] = set
                for id in waiting {
                    guard let environment = state.graph.nodesByID[id], environment.environment != nil else { continue }
                    environment.environment?.model = nil
                    try? updateVoices(environment: environment, time: -1)
                }
            case .failure(let error):
                state.spatial.hrtfFailures[loaded.key] = error
                for id in waiting {
                    guard let environment = state.graph.nodesByID[id] else { continue }
                    state.publishing.pendingEvents.append(
                        .environmentProblem(node: environment.name, message: "\(error)"))
                }
            }
        }
    }

    /// Poll. Applies the pending `hrtf` changes that waited for `loaded`.
    private func adoptHRTFChanges(_ loaded: LoadedHRTFSet) {
        for (id, change) in state.spatial.hrtfChanges where change.key == loaded.key {
            state.spatial.hrtfChanges[id] = nil
            guard let environment = state.graph.nodesByID[id], environment.environment != nil else { continue }
            switch loaded.result {
            case .success(let set):
                do throws(EngineError) {
                    try useHRTFSet(set, value: change.value, on: environment, time: -1)
                } catch {
                    state.publishing.pendingEvents.append(
                        .environmentProblem(
                            node: environment.name,
                            message: "\(environment.name).hrtf: \(error.message)"))
                }
            case .failure(let error):
                state.publishing.pendingEvents.append(
                    .environmentProblem(
                        node: environment.name,
                        message: "\(environment.name).hrtf: \(error)"))
            }
        }
    }
}
