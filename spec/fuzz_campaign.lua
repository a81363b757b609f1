-- the fuzzer's short campaign (issue 20): a few hundred seeds of random operations over the whole
-- API (tools/fuzz.lua), against the build the test run uses: under `./impetus test --sanitize`
-- the ASan + UBSan build, so any sanitizer report, crash, C assert, hang (20 s without progress),
-- NaN past the NaN guard, unclean error or failed callback that changes the world fails it. The
-- campaign prints each distinct failure with its seed; `./impetus fuzz --seed S --seeds 1`
-- replays one and writes its shrunk reproduction to fuzz-findings/.
--
-- It fails on the engine as it is until the fixes of issue 20 land; the file is named
-- *_campaign.lua so that the default run (pattern _spec) leaves it out. Run it alone with
--   ./impetus test --sanitize --pattern=_campaign spec/fuzz_campaign.lua
-- FUZZ_SEEDS and FUZZ_OPS in the environment change its size (defaults 300 seeds of 120 operations).

local BUILD = os.getenv("IMPETUS_BUILD") or "build/release"
local SEEDS = tonumber(os.getenv("FUZZ_SEEDS") or "") or 300
local OPS = tonumber(os.getenv("FUZZ_OPS") or "") or 120

describe("fuzz campaign", function()
  it(string.format("%d seeds of %d operations find nothing", SEEDS, OPS), function()
    local build = BUILD:match("sanitize") and "sanitize" or "release"
    local out_dir = os.tmpname()
    os.remove(out_dir)
    local cmd = string.format("IMPETUS_ROOT=%q lua5.4 tools/fuzz.lua --build %s --seeds %d --ops %d --no-minimize --quiet --out %q 2>&1",
      os.getenv("PWD") or ".", build, SEEDS, OPS, out_dir)
    local p = io.popen(cmd)
    local out = p:read("a")
    local _, _, status = p:close()
    os.execute("rm -rf '" .. out_dir .. "'")
    local seeds, ops = out:match("fuzz: (%d+) seeds, (%d+) operations")
    assert.is_truthy(seeds, "the fuzzer did not finish:\n" .. out)
    assert.are.equal(SEEDS, tonumber(seeds), out)
    assert.is_true(tonumber(ops) >= SEEDS * OPS * 0.9, out)
    if status ~= 0 or not out:find(": 0 distinct failure%(s%)") then error("the campaign found failures:\n" .. out, 0) end
  end)
end)
