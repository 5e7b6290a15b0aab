import KVOEtcd

/// One etcd request made before the daemon's loop runs, on a poll(2) loop of
/// its own: what kvod reads (and writes) before its socket listens.
enum EtcdStartupCall {
    /// Runs `call` on a client of `configuration` until it answers.
    static func run<T>(_ configuration: EtcdClient.Configuration,
                       _ call: (EtcdClient, @escaping (Result<T, EtcdError>) -> Void) -> Void)
        throws(DaemonError) -> Result<T, EtcdError> {
        let driver = EtcdPollLoop()
        let client: EtcdClient
        do {
            client = try EtcdClient(configuration, driver: driver)
        } catch {
            throw .cannotReachEtcd("\(error)")
        }
        driver.client = client
        var result: Result<T, EtcdError>?
        call(client) { result = $0 }
        while result == nil { driver.turn(maxWaitMilliseconds: 100) }
        return result!
    }
}
