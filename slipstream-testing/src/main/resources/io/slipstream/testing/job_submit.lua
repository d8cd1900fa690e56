-- Only root (the Slipstream server, submitting with sbatch --uid) may put jobs into partition "slipstream": a tenant's
-- job submitting its own would take what Slipstream gives other runs on a node. The same text as in docs/slurm.md.
local PARTITION = "slipstream"
-- Whether PARTITION is the cluster's default (Default=YES), where a job that names no partition goes: it is in the tests.
local IS_DEFAULT = true

local function targets(partitions)
  if partitions == nil then
    return IS_DEFAULT
  end
  for name in string.gmatch(partitions, "[^,]+") do
    if name == PARTITION then
      return true
    end
  end
  return false
end

function slurm_job_submit(job_desc, part_list, submit_uid)
  if submit_uid ~= 0 and targets(job_desc.partition) then
    slurm.log_user("partition " .. PARTITION .. " takes Slipstream's jobs only: submit to another partition")
    return slurm.ERROR
  end
  return slurm.SUCCESS
end

function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
  if modify_uid ~= 0 and job_desc.partition ~= nil and targets(job_desc.partition) then
    slurm.log_user("partition " .. PARTITION .. " takes Slipstream's jobs only")
    return slurm.ERROR
  end
  return slurm.SUCCESS
end
