// Copyright attune authors.
//
// The bash stub that `attune recipe import` puts in place of launchers and setup commands in the
// sandbox (capture.cc installs it under each name): it records each call instead of running it,
// and follows the shells, batch scripts and installed tools a launch script runs through.
#ifndef ATTUNE_ENGINE_IMPORTER_CAPTURE_STUB_H_
#define ATTUNE_ENGINE_IMPORTER_CAPTURE_STUB_H_

namespace attune::importer {

extern const char* const kCaptureStub;

}  // namespace attune::importer

#endif  // ATTUNE_ENGINE_IMPORTER_CAPTURE_STUB_H_
