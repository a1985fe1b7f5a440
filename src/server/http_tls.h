#pragma once

// HTTPS for clusterd's HTTP endpoint (GnuTLS, through libmicrohttpd): the server certificate
// and key, and optionally a client CA (mTLS), read from PEM files and re-read when the files
// change (cert-manager rotates them in place), without a restart. Each new handshake gets the
// certificate last loaded; connections already open keep theirs. A file that does not load
// leaves the previous credentials in use (logged, and counted in
// clusterd_http_tls_reloads_total{result="error"}).
#include <gnutls/abstract.h>
#include <gnutls/gnutls.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "common/file_change.h"
#include "server/http_transport.h"

namespace clusterd::server {

class HttpTls {
 public:
  // Reads the files once; an error names the file and what is wrong with it.
  static absl::StatusOr<std::unique_ptr<HttpTls>> Load(const HttpTransport::TlsFiles& files);
  ~HttpTls();

  // Polls the files every reload_interval on a thread of its own, until Stop().
  void StartReloading();
  void Stop();
  // Re-reads the files if one of them changed since the last load (or the last read failed);
  // true when new credentials were taken.
  bool ReloadIfChanged();

  // The handshake's certificate callback (libmicrohttpd's MHD_OPTION_HTTPS_CERT_CALLBACK). It
  // serves the one HttpTls of the process that has started (one TLS HTTP endpoint each).
  static gnutls_certificate_retrieve_function2* CertificateCallback();

  bool has_client_ca() const { return !files_.client_ca.empty(); }
  const std::string& initial_client_ca_pem() const { return initial_ca_pem_; }
  // The subject DN of the session's client certificate when it chains to the client CA;
  // "" when there is none, it does not verify, or no client CA is configured.
  std::string VerifiedSubject(gnutls_session_t session) const;

 private:
  // One generation of credentials. Kept alive for the process's life: a handshake in flight
  // may still use an older one (rotations are rare and each is a few KiB).
  struct Credentials {
    std::vector<gnutls_pcert_st> chain;
    gnutls_privkey_t key = nullptr;
    gnutls_x509_trust_list_t trust = nullptr;  // client CA; null without one
    std::string fingerprint;                   // the files' content, to notice a change
    std::string ca_pem;                        // the client CA as read ("" without one)
  };
  explicit HttpTls(HttpTransport::TlsFiles files) : files_(std::move(files)) {}
  static absl::StatusOr<Credentials*> Read(const HttpTransport::TlsFiles& files);
  static int Retrieve(gnutls_session_t, const gnutls_datum_t*, int, const gnutls_pk_algorithm_t*,
                      int, gnutls_pcert_st**, unsigned int*, gnutls_privkey_t*);
  const Credentials* current() const;

  const HttpTransport::TlsFiles files_;
  std::string initial_ca_pem_;
  mutable absl::Mutex mu_;
  Credentials* current_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::vector<std::unique_ptr<Credentials>> all_ ABSL_GUARDED_BY(mu_);
  // The cert, key and client CA files: read again only when one of them changed.
  absl::Mutex reload_mu_;
  std::vector<std::unique_ptr<FileChange>> watched_ ABSL_GUARDED_BY(reload_mu_);
  bool reload_pending_ ABSL_GUARDED_BY(reload_mu_) = false;  // changed, not loaded yet
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread reloader_;
};

}  // namespace clusterd::server
