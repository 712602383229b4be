# Pester 5 tests of Install-PowerPlanService and Uninstall-PowerPlanService against a stand-in
# release (an install.ps1 and a powerplan.exe script that record how they were called): the
# release's own install and uninstall run as Windows processes in the Windows tier
# (test/windows-process/release.scenario.ts) and on windows-latest (the GitHub workflow).
# Runs under Windows PowerShell 5.1 and PowerShell 7.

BeforeAll {
    Import-Module (Join-Path $PSScriptRoot '../../../integrations/powershell/PowerPlan/PowerPlan.psd1') -Force
    $script:Root = Join-Path ([System.IO.Path]::GetTempPath()) ("powerplan-pester-service-" + [guid]::NewGuid())
    $script:Release = Join-Path $script:Root 'powerplan-0.1.0-win-x64'
    $script:Calls = Join-Path $script:Root 'calls.txt'
    New-Item -ItemType Directory -Force -Path $script:Release | Out-Null
    # install.ps1 of the stand-in: records its parameters, as the real one is given them.
    Set-Content -Path (Join-Path $script:Release 'install.ps1') -Value @"
[CmdletBinding(SupportsShouldProcess = `$true)]
param([string]`$TokenFile, [string]`$Destination)
Add-Content -Path '$script:Calls' -Value ("install Destination=" + `$Destination + " TokenFile=" + `$TokenFile)
"@
}

AfterAll {
    Remove-Item -Recurse -Force $script:Root -ErrorAction SilentlyContinue
    Remove-Module PowerPlan -ErrorAction SilentlyContinue
}

Describe 'Install-PowerPlanService' {
    BeforeEach { Remove-Item $script:Calls -ErrorAction SilentlyContinue }

    It 'runs the release''s install.ps1 with the destination and the token file' {
        $dest = Join-Path $script:Root 'installed'
        Install-PowerPlanService -Path $script:Release -Destination $dest -TokenFile 'C:\tokens.json' -Confirm:$false
        Get-Content $script:Calls | Should -Be @("install Destination=$dest TokenFile=C:\tokens.json")
    }

    It 'changes nothing under -WhatIf' {
        Install-PowerPlanService -Path $script:Release -Destination (Join-Path $script:Root 'x') -WhatIf
        Test-Path $script:Calls | Should -BeFalse
    }

    It 'a path that is not a release is a terminating error naming it, and nothing runs' {
        $err = $null
        try { Install-PowerPlanService -Path (Join-Path $script:Root 'nowhere') -Confirm:$false } catch { $err = $_ }
        $err | Should -Not -BeNullOrEmpty
        $err.FullyQualifiedErrorId | Should -BeLike 'PowerPlan.release_not_found*'
        $err.Exception.Message | Should -BeLike "*nowhere*"
        $empty = Join-Path $script:Root 'empty'
        New-Item -ItemType Directory -Force -Path $empty | Out-Null
        $err = $null
        try { Install-PowerPlanService -Path $empty -Confirm:$false } catch { $err = $_ }
        $err.FullyQualifiedErrorId | Should -BeLike 'PowerPlan.release_not_found*'
        $err.Exception.Message | Should -BeLike '*no install.ps1*'
        Test-Path $script:Calls | Should -BeFalse
    }

    It 'is ConfirmImpact High: it asks before installing' {
        (Get-Command Install-PowerPlanService).ScriptBlock.Attributes |
            Where-Object { $_ -is [System.Management.Automation.CmdletBindingAttribute] } |
            ForEach-Object { $_.ConfirmImpact } | Should -Be 'High'
    }
}

Describe 'Uninstall-PowerPlanService' {
    It 'a folder without powerplan.exe is a terminating error naming it' {
        $err = $null
        try { Uninstall-PowerPlanService -Path $script:Root -Confirm:$false } catch { $err = $_ }
        $err.FullyQualifiedErrorId | Should -BeLike 'PowerPlan.release_not_found*'
        $err.Exception.Message | Should -BeLike "*$([System.IO.Path]::GetFileName($script:Root))*"
    }

    It 'changes nothing under -WhatIf' {
        Set-Content -Path (Join-Path $script:Release 'powerplan.exe') -Value 'not run'
        { Uninstall-PowerPlanService -Path $script:Release -WhatIf } | Should -Not -Throw
    }
}
