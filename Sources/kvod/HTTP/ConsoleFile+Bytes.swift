import KVODCore

extension ConsoleFile {
    /// The file's bytes, built into kvod from Sources/kvod/Console (Package.swift's
    /// `embedInCode`): the console needs nothing on disk.
    var bytes: [UInt8] {
        switch self {
        case .page: PackageResources.index_html
        case .script: PackageResources.console_js
        case .style: PackageResources.console_css
        }
    }
}
