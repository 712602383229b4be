# Pester 5 tests of the PowerPlan module against live powerplan services on the simulated backend,
# started by test/integrations/powershell.test.ts (or by CI), which passes them in the environment:
#   POWERPLAN_TEST_PORT        plain http, no token file; POWERPLAN_STATE_DIR is its state directory,
#                              where the module finds the local administrator credential (as root)
#   POWERPLAN_TEST_TOKEN_PORT  http with a token file; POWERPLAN_TEST_TOKEN (control scope) and
#                              POWERPLAN_TEST_READ_TOKEN (read scope) are tokens in it
#   POWERPLAN_TEST_TLS_PORT    https with a test certificate for localhost that this host trusts;
#                              POWERPLAN_TEST_TLS_STATE_DIR its state directory
#   POWERPLAN_TEST_PWSH        this PowerShell's executable, for tests that need a second process
# Runs under Windows PowerShell 5.1 and PowerShell 7.

BeforeAll {
    $script:ModulePath = Join-Path $PSScriptRoot '../../../integrations/powershell/PowerPlan/PowerPlan.psd1'
    Import-Module $script:ModulePath -Force
    . (Join-Path $PSScriptRoot 'Compat.ps1')
    $script:Port = [int]$env:POWERPLAN_TEST_PORT
    $script:TokenPort = [int]$env:POWERPLAN_TEST_TOKEN_PORT
    $script:TlsPort = [int]$env:POWERPLAN_TEST_TLS_PORT
    $script:Guid = '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$'
    $script:HighPerformance = '8c5e7fda-e8bf-4a96-9a85-a6e23a8c635c'
    $script:Balanced = '381b4222-f694-41f0-9685-ff5bb260df2e'
    # The plan in force, asked without the module.
    function script:Get-ActiveId([int]$OnPort = $script:Port) {
        (Invoke-RestMethod -UseBasicParsing "http://127.0.0.1:$OnPort/v1/plans/active").plan.id
    }
    # Runs a script in a new process of this same PowerShell with `Answer` as its standard input
    # (what a person types at a -Confirm prompt); returns its output lines.
    function script:Invoke-InChildHost([string]$Script, [string]$Answer) {
        $exe = $env:POWERPLAN_TEST_PWSH
        $full = "Import-Module '$script:ModulePath'; $Script"
        $Answer | & $exe -NoProfile -Command $full 2>&1 | ForEach-Object { "$_" }
    }
}

AfterAll {
    Remove-Module PowerPlan -ErrorAction SilentlyContinue
}

Describe 'The module as Windows PowerShell 5.1 reads it' {
    It '<File> parses, and uses no PowerShell 6/7-only syntax or parameters' -TestCases @(
        @{ File = 'integrations/powershell/PowerPlan/PowerPlan.psm1' }
        @{ File = '.github/scripts/powercfg-smoke.ps1' }
    ) {
        param($File)
        $found = @(Find-PowerShell7Syntax -Path (Join-Path $PSScriptRoot "../../../$File"))
        ($found | ForEach-Object { "line $($_.Line): $($_.What)" }) -join '; ' | Should -BeNullOrEmpty
    }

    It 'the check finds <What>' -Skip:($PSVersionTable.PSVersion.Major -lt 7) -TestCases @(
        @{ What = 'ternary'; Code = '$a = $true ? 1 : 2' }
        @{ What = 'null-coalescing'; Code = '$b = $null ?? 3' }
        @{ What = 'null-coalescing assignment'; Code = '$c ??= 4' }
        @{ What = 'null-conditional member'; Code = '$d = ${a}?.Length' }
        @{ What = 'null-conditional index'; Code = '$e = ${a}?[0]' }
        @{ What = 'pipeline chain'; Code = 'Get-Item . && Get-Item .' }
        @{ What = 'ForEach-Object -Parallel'; Code = '1..3 | ForEach-Object -Parallel { $_ }' }
        @{ What = '-SkipCertificateCheck'; Code = 'Invoke-RestMethod http://x -SkipCertificateCheck' }
        @{ What = '-SkipCertificateCheck splatted'; Code = '$r = @{ Uri = ''http://x''; SkipCertificateCheck = $true }; Invoke-WebRequest @r' }
        @{ What = 'ConvertFrom-Json -AsHashtable'; Code = '''{}'' | ConvertFrom-Json -AsHashtable' }
        @{ What = 'a clean block'; Code = 'function f { process { } clean { } }' }
        @{ What = 'a 7-only command'; Code = '1, 2 | Join-String -Separator ,' }
    ) {
        param($What, $Code)
        $file = Join-Path ([System.IO.Path]::GetTempPath()) "powerplan-compat-$PID.ps1"
        Set-Content -Path $file -Value $Code
        try { @(Find-PowerShell7Syntax -Path $file).Count | Should -BeGreaterThan 0 }
        finally { Remove-Item $file }
    }

    It 'the check lets a 7-only parameter pass behind a version check' {
        $file = Join-Path ([System.IO.Path]::GetTempPath()) "powerplan-compat-ok-$PID.ps1"
        Set-Content -Path $file -Value 'if ($PSVersionTable.PSVersion.Major -ge 6) { Invoke-RestMethod http://x -SkipCertificateCheck } else { Invoke-RestMethod http://x }'
        try { @(Find-PowerShell7Syntax -Path $file).Count | Should -Be 0 }
        finally { Remove-Item $file }
    }

    It 'exports the four commands of the manifest, each with help' {
        $names = @((Get-Command -Module PowerPlan).Name | Sort-Object)
        $names | Should -Be @('Get-PowerPlanRecommendation', 'Get-PowerPlanStatus', 'Invoke-PowerPlanBenchmark', 'Set-PowerPlan')
        (Test-ModuleManifest $script:ModulePath).ExportedFunctions.Keys | Sort-Object | Should -Be $names
        foreach ($n in $names) { (Get-Help $n).Synopsis | Should -Not -BeLike "*$n*[<]*" -Because "$n has a synopsis" }
    }
}

Describe 'Get-PowerPlanStatus' {
    It 'writes a PowerPlan.Status with the plan, its kind, owner and processor settings' {
        $s = Get-PowerPlanStatus -Port $script:Port
        $s.PSObject.TypeNames[0] | Should -Be 'PowerPlan.Status'
        @($s.PSObject.Properties.Name) | Should -Be @('ComputerName', 'PlanName', 'Kind', 'PlanId', 'Owner', 'PolicyManaged', 'CanSet', 'MinProcessorStateAC', 'MaxProcessorStateAC', 'Governor', 'Raw')
        $s.ComputerName | Should -Be 'localhost'
        $s.PlanId | Should -Match $script:Guid
        $s.PlanId | Should -Be (Get-ActiveId)
        $s.Kind | Should -BeIn @('high-performance', 'balanced', 'power-saver', 'ultimate-performance', 'custom')
        $s.Owner | Should -Be 'simulated'
        $s.CanSet | Should -BeTrue
        $s.PolicyManaged | Should -BeFalse
        # A percentage (Int32 from 5.1's ConvertFrom-Json, Int64 from 7's).
        $s.MaxProcessorStateAC | Should -BeGreaterThan 0
        $s.MaxProcessorStateAC | Should -BeLessOrEqual 100
        $s.MinProcessorStateAC | Should -BeLessOrEqual $s.MaxProcessorStateAC
        $s.Raw.plan.id | Should -Be $s.PlanId
    }

    It 'takes computer names from the pipeline, by value and by property name, in order' {
        $byValue = @('localhost', '127.0.0.1' | Get-PowerPlanStatus -Port $script:Port)
        $byValue.ComputerName | Should -Be @('localhost', '127.0.0.1')
        $objects = @([pscustomobject]@{ Name = 'localhost' }, [pscustomobject]@{ DNSHostName = '127.0.0.1' }, [pscustomobject]@{ CN = 'localhost' })
        $byProperty = @($objects | Get-PowerPlanStatus -Port $script:Port)
        $byProperty.ComputerName | Should -Be @('localhost', '127.0.0.1', 'localhost')
        ($byProperty.PlanId | Select-Object -Unique) | Should -Be (Get-ActiveId)
        @(Get-PowerPlanStatus -ComputerName localhost, 127.0.0.1 -Port $script:Port).Count | Should -Be 2
    }
}

Describe 'Set-PowerPlan' {
    BeforeEach {
        Set-PowerPlan -Plan $script:Balanced -Port $script:Port -Confirm:$false | Out-Null
    }

    It '-WhatIf shows the change and changes nothing' {
        $r = Set-PowerPlan high-performance -Port $script:Port -WhatIf
        $r.DryRun | Should -BeTrue
        $r.Changed | Should -BeTrue
        $r.Before | Should -Be 'Balanced'
        $r.After | Should -Be 'High performance'
        Get-ActiveId | Should -Be $script:Balanced
    }

    It 'changes the plan and says so with Changed, Before and After; again changes nothing' {
        $r = Set-PowerPlan high-performance -Port $script:Port -Confirm:$false
        $r.PSObject.TypeNames[0] | Should -Be 'PowerPlan.SetResult'
        $r.Changed | Should -BeTrue
        $r.DryRun | Should -BeFalse
        $r.Before | Should -Be 'Balanced'
        $r.After | Should -Be 'High performance'
        $r.AfterId | Should -Be $script:HighPerformance
        Get-ActiveId | Should -Be $script:HighPerformance
        $again = Set-PowerPlan $script:HighPerformance -Port $script:Port -Confirm:$false
        $again.Changed | Should -BeFalse
    }

    It '-Confirm asks first: "N" changes nothing, "Y" changes the plan' {
        # One process answers two prompts: N to the first, Y to the second.
        $set = "Set-PowerPlan high-performance -Port $($script:Port) -Confirm | ForEach-Object { 'DryRun=' + `$_.DryRun + ' active=' + (Get-PowerPlanStatus -Port $($script:Port)).PlanId }"
        $out = (Invoke-InChildHost "$set; $set" "N`nY") -join "`n"
        $out | Should -Match 'switch from Balanced'
        $out | Should -Match "DryRun=True active=$($script:Balanced)"
        $out | Should -Match "DryRun=False active=$($script:HighPerformance)"
        Get-ActiveId | Should -Be $script:HighPerformance
    }

    It 'a plan the service does not know is a terminating error carrying the problem detail, and changes nothing' {
        $err = $null
        $out = @()
        try { $out = @('localhost', 'localhost' | Set-PowerPlan 'no such plan' -Port $script:Port -Confirm:$false -ErrorAction SilentlyContinue) }
        catch { $err = $_ }
        $out.Count | Should -Be 0
        $err | Should -Not -BeNullOrEmpty
        $err.FullyQualifiedErrorId | Should -BeLike 'PowerPlan.not_found*'
        $err.CategoryInfo.Category | Should -Be 'ObjectNotFound'
        $err.TargetObject | Should -Be 'localhost'
        $err.Exception.Message | Should -BeLike "localhost: Not found (404 not_found): Plan 'no such plan' not found; available: *"
        $err.Exception.Problem.status | Should -Be 404
        $err.Exception.Problem.code | Should -Be 'not_found'
        Get-ActiveId | Should -Be $script:Balanced
    }

    It 'refuses an empty plan before asking any server' {
        { Set-PowerPlan -Plan '' -Port $script:Port } | Should -Throw -ErrorId 'ParameterArgumentValidationError*'
    }
}

Describe 'Invoke-PowerPlanBenchmark' {
    It '-WhatIf runs nothing' {
        $before = (Invoke-RestMethod -UseBasicParsing "http://127.0.0.1:$($script:Port)/v1/benchmarks").total
        Invoke-PowerPlanBenchmark -Port $script:Port -WhatIf | Should -BeNullOrEmpty
        (Invoke-RestMethod -UseBasicParsing "http://127.0.0.1:$($script:Port)/v1/benchmarks").total | Should -Be $before
    }

    It 'runs the quick benchmark and writes a PowerPlan.BenchmarkResult that the service keeps' {
        $b = Invoke-PowerPlanBenchmark -Port $script:Port -Force -WarningAction SilentlyContinue
        $b.PSObject.TypeNames[0] | Should -Be 'PowerPlan.BenchmarkResult'
        $b.ComputerName | Should -Be 'localhost'
        $b.Id | Should -Match '^bm-'
        $b.SingleThreadMops | Should -BeGreaterThan 0
        $b.AllCoreMops | Should -BeGreaterThan 0
        $b.Raw.profile | Should -Be 'quick'
        $b.Raw.forced | Should -BeTrue
        (Invoke-RestMethod -UseBasicParsing "http://127.0.0.1:$($script:Port)/v1/benchmarks/$($b.Id)").id | Should -Be $b.Id
    }
}

Describe 'Get-PowerPlanRecommendation' {
    BeforeAll {
        Set-PowerPlan -Plan $script:Balanced -Port $script:Port -Confirm:$false | Out-Null
    }

    It 'writes a PowerPlan.Recommendation with the recommended plan and its reasons' {
        $r = Get-PowerPlanRecommendation -Port $script:Port -Benchmark none
        $r.PSObject.TypeNames[0] | Should -Be 'PowerPlan.Recommendation'
        $r.Raw.workload | Should -Be 'database'
        $r.Recommended | Should -Be 'High performance'
        $r.RecommendedId | Should -Be $script:HighPerformance
        $r.ChangeRecommended | Should -BeTrue
        $r.Confidence | Should -BeIn @('low', 'medium', 'high')
        $r.Summary | Should -Not -BeNullOrEmpty
        @($r.Reasons).Count | Should -BeGreaterThan 0
        $r.Reasons[0] | Should -BeOfType [string]
    }

    It 'passes the workload on: energy-saving is not advised High performance' {
        $r = Get-PowerPlanRecommendation -Workload energy-saving -Port $script:Port -Benchmark none -ErrorAction Stop
        $r.Raw.workload | Should -Be 'energy-saving'
        $r.RecommendedId | Should -Not -Be $script:HighPerformance
    }

    It 'refuses a workload it does not know before asking any server' {
        { Get-PowerPlanRecommendation -Workload gaming -Port $script:Port } | Should -Throw -ErrorId 'ParameterArgumentValidationError*'
    }
}

Describe 'The local administrator credential (no token configured)' {
    BeforeAll {
        $script:SavedStateDir = $env:POWERPLAN_STATE_DIR
        $script:NoCredential = Join-Path ([System.IO.Path]::GetTempPath()) "powerplan-no-credential-$PID"
        New-Item -ItemType Directory -Path $script:NoCredential -Force | Out-Null
    }
    AfterAll {
        $env:POWERPLAN_STATE_DIR = $script:SavedStateDir
        Remove-Item -Recurse -Force $script:NoCredential
    }

    It 'run as root / elevated, the module reads admin.token from the state directory and has control' {
        Test-Path (Join-Path $env:POWERPLAN_STATE_DIR 'admin.token') | Should -BeTrue
        $r = Set-PowerPlan power-saver -Port $script:Port -Confirm:$false
        $r.Changed | Should -BeTrue
        Get-ActiveId | Should -Be 'a1841308-3541-4fab-bc81-f71556f20b4a'
        Set-PowerPlan -Plan $script:Balanced -Port $script:Port -Confirm:$false | Out-Null
    }

    It 'without a readable credential it still reads, and a change is a terminating PermissionDenied' {
        $env:POWERPLAN_STATE_DIR = $script:NoCredential
        try {
            (Get-PowerPlanStatus -Port $script:Port).PlanId | Should -Be $script:Balanced
            $err = $null
            try { Set-PowerPlan power-saver -Port $script:Port -Confirm:$false } catch { $err = $_ }
            $err.FullyQualifiedErrorId | Should -BeLike 'PowerPlan.forbidden*'
            $err.CategoryInfo.Category | Should -Be 'PermissionDenied'
            $err.Exception.Problem.detail | Should -Match "needs the 'control' scope"
            Get-ActiveId | Should -Be $script:Balanced
        }
        finally { $env:POWERPLAN_STATE_DIR = $script:SavedStateDir }
    }
}

Describe '-Token against a service with a token file' {
    It 'without a token: a terminating AuthenticationError carrying the detail' {
        $err = $null
        $saved = $env:POWERPLAN_STATE_DIR
        # No credential of this computer either (it would be another service's: refused as well).
        $env:POWERPLAN_STATE_DIR = [System.IO.Path]::GetTempPath()
        try { Get-PowerPlanStatus -Port $script:TokenPort } catch { $err = $_ }
        finally { $env:POWERPLAN_STATE_DIR = $saved }
        $err.FullyQualifiedErrorId | Should -BeLike 'PowerPlan.unauthorized*'
        $err.CategoryInfo.Category | Should -Be 'AuthenticationError'
        $err.Exception.Problem.status | Should -Be 401
        $err.Exception.Message | Should -BeLike '*401 unauthorized*'
    }

    It 'with the token as a string and as a SecureString' {
        (Get-PowerPlanStatus -Port $script:TokenPort -Token $env:POWERPLAN_TEST_TOKEN).PlanId | Should -Match $script:Guid
        $secure = ConvertTo-SecureString $env:POWERPLAN_TEST_TOKEN -AsPlainText -Force
        (Get-PowerPlanStatus -Port $script:TokenPort -Token $secure).PlanId | Should -Match $script:Guid
        $r = Set-PowerPlan power-saver -Port $script:TokenPort -Token $secure -Confirm:$false
        $r.After | Should -Be 'Power saver'
        (Get-PowerPlanStatus -Port $script:TokenPort -Token $secure).Kind | Should -Be 'power-saver'
    }

    It 'a read-only token cannot change the plan: PermissionDenied with the detail, nothing changed' {
        $err = $null
        try { Set-PowerPlan balanced -Port $script:TokenPort -Token $env:POWERPLAN_TEST_READ_TOKEN -Confirm:$false } catch { $err = $_ }
        $err.FullyQualifiedErrorId | Should -BeLike 'PowerPlan.forbidden*'
        $err.CategoryInfo.Category | Should -Be 'PermissionDenied'
        $err.Exception.Problem.detail | Should -Match 'control'
        (Get-PowerPlanStatus -Port $script:TokenPort -Token $env:POWERPLAN_TEST_READ_TOKEN).Kind | Should -Be 'power-saver'
    }
}

Describe '-UseSsl against the service in TLS mode' {
    BeforeAll {
        $script:SavedStateDir = $env:POWERPLAN_STATE_DIR
        $env:POWERPLAN_STATE_DIR = $env:POWERPLAN_TEST_TLS_STATE_DIR
    }
    AfterAll { $env:POWERPLAN_STATE_DIR = $script:SavedStateDir }

    It 'reads and sets the plan over https when the certificate is trusted' {
        $s = Get-PowerPlanStatus -ComputerName localhost -Port $script:TlsPort -UseSsl
        $s.Owner | Should -Be 'simulated'
        $r = Set-PowerPlan high-performance -ComputerName localhost -Port $script:TlsPort -UseSsl -Confirm:$false
        $r.AfterId | Should -Be $script:HighPerformance
        (Get-PowerPlanStatus -ComputerName localhost -Port $script:TlsPort -UseSsl).PlanId | Should -Be $script:HighPerformance
    }

    It 'plain http against the TLS port fails with a terminating error' {
        { Get-PowerPlanStatus -ComputerName localhost -Port $script:TlsPort } | Should -Throw -ErrorId 'PowerPlan.*'
    }

    It 'an untrusted certificate fails and says to trust it (Linux: a CA store without it)' -Skip:(-not $IsLinux) {
        $empty = Join-Path ([System.IO.Path]::GetTempPath()) "powerplan-empty-ca-$PID.pem"
        Set-Content -Path $empty -Value ''
        $saved = $env:SSL_CERT_FILE
        try {
            $env:SSL_CERT_FILE = $empty
            $out = Invoke-InChildHost "try { Get-PowerPlanStatus -Port $($script:TlsPort) -UseSsl } catch { 'ERROR ' + `$_.FullyQualifiedErrorId + ' ' + `$_.Exception.Message }" ''
        }
        finally { $env:SSL_CERT_FILE = $saved; Remove-Item $empty }
        $text = $out -join "`n"
        $text | Should -Match 'ERROR PowerPlan.connection_failed'
        $text | Should -Match 'certificate'
        $text | Should -Match "Trust the service's certificate"
    }
}
