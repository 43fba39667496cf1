// The reason phrase of each status the transport and the endpoints answer with.
#pragma once

#include <string_view>

namespace aiadmit {

// "Content Too Large" for 413; "Unknown" for a status none of them sends.
std::string_view reasonPhrase(int status);

}  // namespace aiadmit
