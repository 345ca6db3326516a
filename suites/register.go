// Package suites is the conformance catalog of mcp-conform: its checks as
// Ginkgo specs, one file per area, each check its registration (id, rules
// per version with level and clause, transports, roles) and its body. The
// harness that runs a check against a target is internal/harness.
//
// The same specs run in-process from `mcp-conform run` and under
// `ginkgo -r suites -- --stdio "…"`.
package suites

// Register declares every spec of the catalog in the Ginkgo tree. Call it
// once before RunSpecs (again after a ginkgo globals reset).
func Register() {
	registerCancel()
	registerProgress()
	registerHTTPCancel()
	registerSSE()
	registerSession()
	registerSecurityHTTP()
	registerHTTPReconnect()
	registerRobust()
	registerIdem()
	registerTask()
	registerTimeout()
	registerFlow()
	registerRobustInput()
	registerSecurity()
	registerSecurityAuth()
	registerLifecycle()
	registerHTTPModern()
	registerHTTPStreams()
	registerMetaKeys()
	registerToolContract()
	registerPagination()
	registerLogging()
	registerSubscriptions()
	registerHTTPStreamEnd()
	registerHTTPVersionAbsent()
	registerHTTPGETUnrelated()
	registerClientInfo()           // clientinfo.go
	registerStreamRelated()        // http_related.go
	registerNoPriorContext()       // lifecycle_context.go
	registerExtensionUndeclared()  // extension_undeclared.go
	registerHTTPLogRouting()       // http_log_routing.go
	registerHTTPParamHeaders()     // http_param_headers.go
	registerHandles()              // handles.go
	registerHandlesBound()         // handles_bound.go
	registerSubscriptionTeardown() // subscription_teardown.go
	registerHTTPModernOnly()       // http_modern_only.go
	registerVersionModernOnly()    // version_modern_only.go
	registerModernOnlyHeaders()    // http_modern_only_headers.go
	registerVersionDiscover()      // version_discover.go
}
