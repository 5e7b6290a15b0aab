/// What kvod and kvoctl were built from, as `--version` and `info` report it:
/// read from git at build time by `scripts/build-info.sh` (through
/// `Plugins/BuildInfoPlugin`), `unknown` where the source was no git checkout.
/// A module of its own, so that a new commit recompiles only it and the
/// files that import it.
public enum BuildInfo {
    /// The nearest version tag: `0.2.0` on it, `0.2.0+3` three commits after
    /// it, `unknown` with no tag or no git.
    public static var version: String { generatedVersion }

    /// The commit built, 12 hex digits, or `unknown`.
    public static var commit: String { generatedCommit }

    /// `0.2.0+3 (commit 1234abcd5678)`: what `--version` prints.
    public static var description: String { "\(version) (commit \(commit))" }
}
