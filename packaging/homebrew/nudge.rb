# Homebrew formula for nudge, built from source (docs/install.md):
#
#   brew install --HEAD ./packaging/homebrew/nudge.rb
#   brew services start nudge
#
# On macOS it builds with cgo, so the menu-bar icon is in, and also
# assembles nudge.app (no Dock icon; notifications come from the bundle).
class Nudge < Formula
  desc "Keeps AI coding agents going after provider errors"
  homepage "https://github.com/nudge-dev/nudge"
  head "https://github.com/nudge-dev/nudge.git", branch: "main"

  depends_on "go" => :build

  def install
    ENV["CGO_ENABLED"] = OS.mac? ? "1" : "0"
    ldflags = "-s -w -X nudge/internal/version.Release=#{version}"
    system "go", "build", *std_go_args(ldflags: ldflags), "./cmd/nudge"
    if OS.mac?
      system "go", "run", "./internal/macapp/makeapp",
             "-exe", bin/"nudge", "-out", prefix/"nudge.app", "-version", version.to_s
    end
  end

  def caveats
    <<~EOS
      nudge runs in the menu bar. Start it now and at every login with:
        brew services start nudge
      or let nudge write its own login item:
        nudge install
      Its settings: #{OS.mac? ? "~/Library/Application Support/nudge/config.yaml" : "~/.config/nudge/config.yaml"}
    EOS
  end

  service do
    run [opt_bin/"nudge", "run", "--service"]
    keep_alive successful_exit: false
    process_type :interactive
    log_path var/"log/nudge.log"
    error_log_path var/"log/nudge.log"
  end

  test do
    assert_match "nudge", shell_output("#{bin}/nudge --version")
    assert_match "Usage", shell_output("#{bin}/nudge --help")
  end
end
