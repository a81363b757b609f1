-- the fuzzer's short campaign (issue 20): a couple of hundred seeds of random operations over the
-- whole API (tools/fuzz.lua), against the build the test run uses: under `./impetus test --sanitize`
-- the ASan + UBSan build, so any sanitizer report, crash, C assert, hang (20 s without progress),
-- NaN past the NaN guard, unclean error, accepted bad argument, or failing callback that left the
-- world changed (or changed the steps after it: the undo checks) fails it. The campaign prints each
-- distinct failure with its first seed; `./impetus fuzz --seed S --seeds 1` replays that seed and
-- writes its shrunk reproduction to fuzz-findings/. FUZZ_SEEDS and FUZZ_OPS in the environment
-- change its size (defaults 400 seeds of 100 operations: about a minute under the sanitizers on
-- two cores); the long campaign is `./impetus fuzz --minutes 30`.
local BUILD = os.getenv("IMPETUS_BUILD") or "build/release"
local SEEDS = tonumber(os.getenv("FUZZ_SEEDS") or "") or 400
local OPS = tonumber(os.getenv("FUZZ_OPS") or "") or 100

describe("fuzz campaign", function()
  it(string.format("%d seeds of %d operations: no crash, hang, sanitizer report, unclean error, NaN, accepted bad input or undo that differs", SEEDS, OPS),
    function()
      local build = BUILD:match("sanitize") and "sanitize" or "release"
      local out_dir = os.tmpname()
      os.remove(out_dir)
      local p = io.popen(string.format("IMPETUS_ROOT=%q lua5.4 tools/fuzz.lua --build %s --seeds %d --ops %d "
        .. "--no-minimize --quiet --out %q 2>&1", os.getenv("PWD") or ".", build, SEEDS, OPS, out_dir))
      local out = p:read("a")
      p:close()
      os.execute("rm -rf '" .. out_dir .. "'")
      local seeds, ops = out:match("fuzz: (%d+) seeds, (%d+) operations")
      assert(seeds, "the fuzzer did not finish:\n" .. out)
      assert.are.equal(SEEDS, tonumber(seeds), out)
      assert.is_true(tonumber(ops) >= SEEDS * OPS * 0.9, out)
      local failures = {} -- the report lists each distinct failure on a line of its own, indented by two
      for sig in out:gmatch("\n  (%S[^\n]*)") do failures[#failures + 1] = sig end
      if #failures > 0 then error("the campaign found " .. table.concat(failures, "; ") .. ":\n" .. out, 0) end
    end)
end)
