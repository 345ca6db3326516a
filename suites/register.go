package suites

// Register declares every spec of the catalog in the Ginkgo tree. Call it
// once before RunSpecs (again after a ginkgo globals reset).
func Register() {
	registerCancel()
	registerProgress()
	registerHTTPCancel()
	registerHTTPChecks()
	registerHTTPReconnect()
	registerRobust()
	registerIdem()
	registerTask()
	registerTimeout()
	registerFlow()
	registerRobustInput()
	registerSecurity()
	registerLifecycle()
}
