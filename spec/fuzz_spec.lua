-- the fuzzer's short campaign (issue 20): a couple of hundred seeds of random operations over the
-- whole API (tools/fuzz.lua), against the build the test run uses: under `./impetus test --sanitize`
-- the ASan + UBSan build, so any sanitizer report, crash, C assert, hang (20 s without progress),
-- NaN past the NaN guard, unclean error or accepted bad argument fails it. The campaign prints each
-- distinct failure with its first seed; `./impetus fuzz --seed S --seeds 1` replays that seed and
-- writes its shrunk reproduction to fuzz-findings/. FUZZ_SEEDS and FUZZ_OPS in the environment
-- change its size (defaults 400 seeds of 100 operations: about a minute under the sanitizers on
-- two cores); the long campaign is `./impetus fuzz --minutes 30`.
local BUILD = os.getenv("IMPETUS_BUILD") or "build/release"
local SEEDS = tonumber(os.getenv("FUZZ_SEEDS") or "") or 400
local OPS = tonumber(os.getenv("FUZZ_OPS") or "") or 100

-- the failures of the undo of a failing step (issue 20 item 4: built on the world snapshots); they
-- are checked by spec/reliability_pending.lua until that undo lands
local UNDO = { ["undo"] = true, ["undo-drift"] = true }

describe("fuzz campaign", function()
  local report -- {out, seeds, ops, failures = {signature, ...}}: one run for every check below
  local function campaign()
    if report then return report end
    local build = BUILD:match("sanitize") and "sanitize" or "release"
    local out_dir = os.tmpname()
    os.remove(out_dir)
    local cmd = string.format("IMPETUS_ROOT=%q lua5.4 tools/fuzz.lua --build %s --seeds %d --ops %d --no-minimize --quiet --out %q 2>&1",
      os.getenv("PWD") or ".", build, SEEDS, OPS, out_dir)
    local p = io.popen(cmd)
    local out = p:read("a")
    p:close()
    os.execute("rm -rf '" .. out_dir .. "'")
    local seeds, ops = out:match("fuzz: (%d+) seeds, (%d+) operations")
    report = { out = out, seeds = tonumber(seeds), ops = tonumber(ops), failures = {} }
    for sig in out:gmatch("\n  (%S[^\n]*)") do report.failures[#report.failures + 1] = sig end
    return report
  end

  it(string.format("%d seeds of %d operations: no crash, hang, sanitizer report, unclean error, NaN or accepted bad input", SEEDS, OPS),
    function()
      local r = campaign()
      assert(r.seeds, "the fuzzer did not finish:\n" .. r.out)
      assert.are.equal(SEEDS, r.seeds, r.out)
      assert.is_true(r.ops >= SEEDS * OPS * 0.9, r.out)
      local found = {}
      for _, sig in ipairs(r.failures) do
        if not UNDO[sig:match("^([%w%-]+):")] then found[#found + 1] = sig end
      end
      if #found > 0 then error("the campaign found " .. table.concat(found, "; ") .. ":\n" .. r.out, 0) end
    end)

  pending("failing callbacks leave the world as it was, and the later steps as in a world where they never failed")
end)
