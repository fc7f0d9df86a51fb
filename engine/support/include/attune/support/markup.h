// Copyright attune authors.
//
// Text placed inside SVG and HTML that attune writes (reports, charts, the dashboard page).
//
// Thread-safety: pure functions.
#ifndef ATTUNE_SUPPORT_MARKUP_H_
#define ATTUNE_SUPPORT_MARKUP_H_

#include <string>

namespace attune::support {

// `s` with <, >, & and " replaced by their entities: safe as element text and inside a
// double-quoted attribute of XML, SVG or HTML.
std::string XmlEscape(const std::string& s);

}  // namespace attune::support

#endif  // ATTUNE_SUPPORT_MARKUP_H_
