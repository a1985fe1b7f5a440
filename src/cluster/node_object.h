#pragma once

// What the cluster side reads from a Kubernetes Node object: its Ready condition, its
// InternalIP and its serial number (the product-serial-number annotation that rank tables and
// public faults name servers by).
#include <string>
#include <string_view>

#include "store/object_store.h"

namespace clusterd::cluster {

inline constexpr std::string_view kNodeSerialAnnotation = "product-serial-number";

// Whether the Node's Ready condition is "True" (false when it has none).
bool NodeIsReady(const store::Object& node);
// status.addresses[type=InternalIP].address, or "".
std::string NodeInternalIp(const store::Object& node);
// The product-serial-number annotation, or "".
std::string NodeSerial(const store::Object& node);

}  // namespace clusterd::cluster
