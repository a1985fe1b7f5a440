#include "server/http_tls.h"

#include <gnutls/x509.h>

#include <atomic>

#include "absl/strings/str_cat.h"
#include "common/log.h"
#include "common/metrics.h"
#include "common/thread_name.h"

namespace clusterd::server {
namespace {

// The HttpTls serving handshakes (see CertificateCallback).
std::atomic<HttpTls*> g_active{nullptr};

absl::StatusOr<std::string> ReadFile(const std::string& path, const char* what) {
  absl::StatusOr<std::string> text = ReadWholeFile(path);
  if (!text.ok()) {
    return absl::NotFoundError(absl::StrCat("cannot read the HTTP TLS ", what, " ", path));
  }
  if (text->empty()) {
    return absl::InvalidArgumentError(absl::StrCat("the HTTP TLS ", what, " ", path, " is empty"));
  }
  return text;
}

gnutls_datum_t Datum(const std::string& s) {
  return gnutls_datum_t{reinterpret_cast<unsigned char*>(const_cast<char*>(s.data())),
                        static_cast<unsigned int>(s.size())};
}

void CountReload(const char* result) {
  MetricsRegistry::Default()
      .GetCounter("clusterd_http_tls_reloads_total",
                  "Re-reads of the HTTP TLS certificate, key and client CA after they changed.",
                  {{"result", result}})
      .Increment();
}

}  // namespace

absl::StatusOr<HttpTls::Credentials*> HttpTls::Read(const HttpTransport::TlsFiles& files) {
  if (files.cert.empty() || files.key.empty()) {
    return absl::InvalidArgumentError("HTTPS needs both --http-tls-cert and --http-tls-key");
  }
  absl::StatusOr<std::string> cert = ReadFile(files.cert, "certificate");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadFile(files.key, "key");
  if (!key.ok()) return key.status();
  std::string ca;
  if (!files.client_ca.empty()) {
    absl::StatusOr<std::string> c = ReadFile(files.client_ca, "client CA");
    if (!c.ok()) return c.status();
    ca = *c;
  }
  auto creds = std::make_unique<Credentials>();
  creds->fingerprint = absl::StrCat(cert->size(), ":", *cert, key->size(), ":", *key, ca);
  creds->ca_pem = ca;
  creds->chain.resize(16);
  unsigned int n = static_cast<unsigned int>(creds->chain.size());
  gnutls_datum_t cert_datum = Datum(*cert);
  int rc = gnutls_pcert_list_import_x509_raw(creds->chain.data(), &n, &cert_datum,
                                             GNUTLS_X509_FMT_PEM, 0);
  if (rc < 0 || n == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("the HTTP TLS certificate ", files.cert,
                     " is not a PEM certificate chain: ", gnutls_strerror(rc)));
  }
  creds->chain.resize(n);
  gnutls_privkey_init(&creds->key);
  gnutls_datum_t key_datum = Datum(*key);
  rc = gnutls_privkey_import_x509_raw(creds->key, &key_datum, GNUTLS_X509_FMT_PEM, nullptr, 0);
  if (rc < 0) {
    for (auto& p : creds->chain) gnutls_pcert_deinit(&p);
    gnutls_privkey_deinit(creds->key);
    return absl::InvalidArgumentError(absl::StrCat(
        "the HTTP TLS key ", files.key, " is not a PEM private key: ", gnutls_strerror(rc)));
  }
  if (!ca.empty()) {
    gnutls_x509_trust_list_init(&creds->trust, 0);
    gnutls_datum_t ca_datum = Datum(ca);
    rc = gnutls_x509_trust_list_add_trust_mem(creds->trust, &ca_datum, nullptr, GNUTLS_X509_FMT_PEM,
                                              0, 0);
    if (rc <= 0) {
      for (auto& p : creds->chain) gnutls_pcert_deinit(&p);
      gnutls_privkey_deinit(creds->key);
      gnutls_x509_trust_list_deinit(creds->trust, 1);
      return absl::InvalidArgumentError(
          absl::StrCat("the HTTP client CA ", files.client_ca,
                       " holds no PEM certificate: ", rc < 0 ? gnutls_strerror(rc) : "none found"));
    }
  }
  return creds.release();
}

absl::StatusOr<std::unique_ptr<HttpTls>> HttpTls::Load(const HttpTransport::TlsFiles& files) {
  absl::StatusOr<Credentials*> creds = Read(files);
  if (!creds.ok()) return creds.status();
  std::unique_ptr<HttpTls> tls(new HttpTls(files));
  tls->initial_ca_pem_ = (*creds)->ca_pem;
  {
    absl::MutexLock lock(&tls->reload_mu_);
    for (const std::string* path : {&files.cert, &files.key, &files.client_ca}) {
      if (path->empty()) continue;
      tls->watched_.push_back(
          std::make_unique<FileChange>(*path, Clock::Real(), absl::ZeroDuration()));
      (void)tls->watched_.back()->Changed();  // what was just read is the baseline
    }
  }
  absl::MutexLock lock(&tls->mu_);
  tls->all_.emplace_back(*creds);
  tls->current_ = *creds;
  return tls;
}

HttpTls::~HttpTls() {
  Stop();
  HttpTls* self = this;
  g_active.compare_exchange_strong(self, nullptr);
  absl::MutexLock lock(&mu_);
  for (auto& c : all_) {
    for (auto& p : c->chain) gnutls_pcert_deinit(&p);
    gnutls_privkey_deinit(c->key);
    if (c->trust != nullptr) gnutls_x509_trust_list_deinit(c->trust, 1);
  }
}

const HttpTls::Credentials* HttpTls::current() const {
  absl::MutexLock lock(&mu_);
  return current_;
}

bool HttpTls::ReloadIfChanged() {
  absl::MutexLock reload_lock(&reload_mu_);
  for (auto& file : watched_) {
    if (file->Changed()) reload_pending_ = true;
  }
  if (!reload_pending_) return false;
  absl::StatusOr<Credentials*> fresh = Read(files_);
  if (!fresh.ok()) {
    // Half-written files during a rotation are normal: keep serving the previous ones.
    static std::atomic<int64_t> last_error_s{0};
    int64_t now_s = absl::ToUnixSeconds(absl::Now());
    if (now_s - last_error_s.exchange(now_s) >= 60) {
      LogWarn("http", "TLS files do not load; keeping the previous certificate",
              {{"error", fresh.status().message()}});
    }
    CountReload("error");
    return false;  // still pending: the next poll tries again
  }
  reload_pending_ = false;
  std::unique_ptr<Credentials> owned(*fresh);
  absl::MutexLock lock(&mu_);
  if (current_ != nullptr && current_->fingerprint == owned->fingerprint) {
    for (auto& p : owned->chain) gnutls_pcert_deinit(&p);
    gnutls_privkey_deinit(owned->key);
    if (owned->trust != nullptr) gnutls_x509_trust_list_deinit(owned->trust, 1);
    return false;
  }
  current_ = owned.get();
  all_.push_back(std::move(owned));
  LogInfo("http", "TLS certificate reloaded", {{"cert", files_.cert}});
  CountReload("ok");
  return true;
}

void HttpTls::StartReloading() {
  g_active.store(this);
  reloader_ = std::thread([this] {
    SetCurrentThreadName("tls-reload");
    absl::MutexLock lock(&mu_);
    while (!stop_) {
      auto stopped = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_; };
      if (mu_.AwaitWithTimeout(absl::Condition(&stopped), files_.reload_interval)) break;
      mu_.Unlock();
      ReloadIfChanged();
      mu_.Lock();
    }
  });
}

void HttpTls::Stop() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  if (reloader_.joinable()) reloader_.join();
}

int HttpTls::Retrieve(gnutls_session_t, const gnutls_datum_t*, int, const gnutls_pk_algorithm_t*,
                      int, gnutls_pcert_st** pcert, unsigned int* pcert_length,
                      gnutls_privkey_t* privkey) {
  HttpTls* tls = g_active.load();
  const Credentials* c = tls != nullptr ? tls->current() : nullptr;
  if (c == nullptr) return -1;
  *pcert = const_cast<gnutls_pcert_st*>(c->chain.data());
  *pcert_length = static_cast<unsigned int>(c->chain.size());
  *privkey = c->key;
  return 0;
}

gnutls_certificate_retrieve_function2* HttpTls::CertificateCallback() { return &Retrieve; }

std::string HttpTls::VerifiedSubject(gnutls_session_t session) const {
  const Credentials* c = current();
  if (c == nullptr || c->trust == nullptr || session == nullptr) return "";
  unsigned int n = 0;
  const gnutls_datum_t* peers = gnutls_certificate_get_peers(session, &n);
  if (peers == nullptr || n == 0) return "";
  std::vector<gnutls_x509_crt_t> crts;
  for (unsigned int i = 0; i < n && i < 16; ++i) {
    gnutls_x509_crt_t crt;
    gnutls_x509_crt_init(&crt);
    if (gnutls_x509_crt_import(crt, &peers[i], GNUTLS_X509_FMT_DER) < 0) {
      gnutls_x509_crt_deinit(crt);
      break;
    }
    crts.push_back(crt);
  }
  std::string subject;
  unsigned int status = 1;
  if (!crts.empty() &&
      gnutls_x509_trust_list_verify_crt(c->trust, crts.data(),
                                        static_cast<unsigned int>(crts.size()), 0, &status,
                                        nullptr) == 0 &&
      status == 0) {
    gnutls_datum_t dn{};
    if (gnutls_x509_crt_get_dn3(crts[0], &dn, 0) == 0) {
      subject.assign(reinterpret_cast<const char*>(dn.data), dn.size);
      gnutls_free(dn.data);
    }
  }
  for (auto crt : crts) gnutls_x509_crt_deinit(crt);
  return subject;
}

}  // namespace clusterd::server
