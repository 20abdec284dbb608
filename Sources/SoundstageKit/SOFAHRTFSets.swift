// Control side (the engine's HRTF loading worker, or the request that first needs a set). The engine's
// HRTF sets: SOFA files read with SpatialAssets, prepared for the quality an environment renders with.
import AudioGraph
import SpatialAssets

extension HRTFSetSource {
    /// SOFA (AES69) files read with libmysofa, resampled to the engine rate and cut to minimum-phase filters
    /// of the quality's length (`SOFADataset.Options(quality:sampleRate:)`). An environment whose `hrtf`
    /// is empty uses the MIT KEMAR set Debian's libmysofa ships.
    public static let sofaFiles = HRTFSetSource(defaultPath: SOFADataset.debianKEMARPath) {
        path, quality, rate throws(HRTFLoadError) in
        do throws(SOFALoadError) {
            return try SOFADataset(
                path: path, sampleRate: rate,
                options: SOFADataset.Options(quality: quality, sampleRate: rate))
        } catch {
            throw HRTFLoadError(path: error.path, reason: error.reason)
        }
    }
}
